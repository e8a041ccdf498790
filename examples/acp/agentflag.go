package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"text/tabwriter"

	"github.com/acpclient/acp/registry"
)

// registryFlags take the agent from the ACP agent registry: --agent ID
// resolves and runs it (downloading a binary on first use into the user's
// cache directory), --list-agents prints the registry's agents, --registry
// names a registry other than the official one.
type registryFlags struct {
	agentID    string
	source     string
	listAgents bool
	stderr     io.Writer // warnings, such as a stale registry
	// out, when set (run sets it), shows downloads: the "installing" line
	// and the progress bar (progress.go), under its lock.
	out *output
	bar *downloadBar
}

func (r *registryFlags) register(fs *flag.FlagSet, stderr io.Writer) {
	r.stderr = stderr
	fs.StringVar(&r.agentID, "agent", "", "run this agent from the ACP registry instead of a command after -- (a binary is downloaded on first use, with a progress line on a terminal)")
	fs.StringVar(&r.source, "registry", "", "the agent registry, a URL or a file (default: the official registry)")
	fs.BoolVar(&r.listAgents, "list-agents", false, "list the registry's agents and exit (NDJSON with --json)")
}

// validate rejects combinations that cannot mean what they say.
func (r *registryFlags) validate(cfg *config) error {
	switch {
	case r.agentID != "" && len(cfg.agent) > 0:
		return errors.New("--agent and an agent command after -- exclude each other")
	case r.listAgents && len(cfg.agent) > 0:
		return errors.New("--list-agents takes no agent command")
	case r.source != "" && r.agentID == "" && !r.listAgents:
		return errors.New("--registry needs --agent or --list-agents")
	}
	return nil
}

func (r *registryFlags) load(ctx context.Context) (*registry.Registry, error) {
	opts := &registry.Options{
		Registry: r.source,
		OnDownload: func(a *registry.Agent, url string) {
			if r.out != nil {
				r.out.mu.Lock()
				defer r.out.mu.Unlock()
			}
			fmt.Fprintf(r.stderr, "acp: installing %s %s from %s\n", cleanLine(a.ID), cleanLine(a.Version), cleanLine(url))
		},
	}
	if r.out != nil {
		r.bar = newDownloadBar(r.out)
		opts.Progress = r.bar.report
	}
	reg, err := registry.Load(ctx, opts)
	if err != nil {
		return nil, err
	}
	if reg.Stale != nil {
		fmt.Fprintf(r.stderr, "acp: using the cached registry: %s\n", cleanText(reg.Stale.Error()))
	}
	return reg, nil
}

// command resolves --agent to the command that runs it.
func (r *registryFlags) command(ctx context.Context) (*exec.Cmd, error) {
	reg, err := r.load(ctx)
	if err != nil {
		return nil, err
	}
	cmd, err := reg.Command(ctx, r.agentID)
	if r.bar != nil {
		r.bar.end() // the download, if any, is over: end its line
	}
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

// agentListing is one line of `--list-agents --json`.
type agentListing struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Description  string   `json:"description"`
	Distribution []string `json:"distribution"`
	Platforms    []string `json:"platforms,omitempty"`
}

// list prints the registry's agents: a table, or with --json one
// agentListing object per line.
func (r *registryFlags) list(ctx context.Context, cfg *config, out *output) int {
	reg, err := r.load(ctx)
	if err != nil {
		out.fail(err)
		return 1
	}
	if cfg.json {
		enc := json.NewEncoder(out.stdout)
		for _, a := range reg.Agents {
			enc.Encode(agentListing{ID: a.ID, Name: a.Name, Version: a.Version, Description: a.Description, Distribution: a.Kinds(), Platforms: a.Platforms()})
		}
		return 0
	}
	tw := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tVERSION\tDISTRIBUTION")
	for _, a := range reg.Agents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cleanLine(a.ID), cleanLine(a.Name), cleanLine(a.Version), strings.Join(a.Kinds(), ", "))
	}
	tw.Flush()
	return 0
}
