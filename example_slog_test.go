package acp_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// LogDiagnostics sends what the client tolerated to a slog logger, with
// the diagnostic's kind and session as attributes.
func ExampleLogDiagnostics() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a reproducible output
			}
			return a
		},
	}))
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Update(map[string]any{"sessionUpdate": "new_kind_of_update"})
			return "end_turn", nil
		},
	}, &acp.ClientOptions{OnDiagnostic: acp.LogDiagnostics(logger.With("agent", "acptest"))})
	ctx := context.Background()
	s, _ := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/work"})
	turn, _ := s.Prompt(ctx, schema.Text("hi"))
	turn.Wait()
	done() // Close delivers every diagnostic queued
	// Output:
	// level=WARN msg="acp: kept an update of unknown kind new_kind_of_update" agent=acptest kind=unknown_update session=sess-1
}
