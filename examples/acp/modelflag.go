package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// registerModelFlag adds --model, which picks a model from the legacy
// models state that gemini-cli and cursor offer (unstable in the SDK).
func registerModelFlag(fs *flag.FlagSet, cfg *config) {
	fs.StringVar(&cfg.model, "model", "", "set this model before the first prompt (agents offering the legacy models list; unstable)")
}

// applyModel sets --model, checked against the models the agent offered.
// An agent that offers models as a config option is pointed at --config.
func applyModel(ctx context.Context, s *acp.Session, cfg *config) error {
	if cfg.model == "" {
		return nil
	}
	err := s.SetModel(ctx, cfg.model)
	if errors.Is(err, acp.ErrNotSupported) {
		for _, o := range s.State().ConfigOptions {
			if sel, ok := o.(*schema.SelectConfigOption); ok && sel.Category == schema.ConfigCategoryModel {
				return fmt.Errorf("the agent offers no models list; set config option %q instead: --config %s=%s", sel.ID, sel.ID, cfg.model)
			}
		}
	}
	return err
}
