package acp_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// captureHandler is a slog.Handler that keeps every record.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

func attrsOf(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	return m
}

// LogDiagnostics logs each diagnostic at Warn with its kind and, when the
// diagnostic is about one, its session as attributes; ClientOptions.Logger
// writes the same record.
func TestLogDiagnostics(t *testing.T) {
	for _, viaLogger := range []bool{false, true} {
		h := &captureHandler{}
		opts := &acp.ClientOptions{OnDiagnostic: acp.LogDiagnostics(slog.New(h))}
		if viaLogger {
			opts = &acp.ClientOptions{Logger: slog.New(h)}
		}
		c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
			tt.Update(map[string]any{"sessionUpdate": "made_up_kind"})
			tt.Junk("not json")
			return "", nil
		}}, opts)
		s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.Prompt(context.Background(), schema.Text("hi"))
		if err != nil {
			t.Fatal(err)
		}
		turn.Wait()
		c.Close() // delivers every queued diagnostic
		h.mu.Lock()
		if len(h.records) != 2 {
			t.Fatalf("records %v", h.records)
		}
		unknown, junk := h.records[0], h.records[1]
		if a := attrsOf(unknown); unknown.Level != slog.LevelWarn || a["kind"] != string(acp.DiagUnknownUpdate) || a["session"] != s.ID() {
			t.Errorf("unknown update logged as %v %q %v", unknown.Level, unknown.Message, a)
		}
		if a := attrsOf(junk); a["kind"] != string(acp.DiagJunkLine) || a["line"] != "not json" || a["session"] != "" {
			t.Errorf("junk line logged as %q %v", junk.Message, a)
		}
		h.mu.Unlock()
	}
}

// A Diagnostic logs as a group of its fields.
func TestDiagnosticLogValue(t *testing.T) {
	d := acp.Diagnostic{Kind: acp.DiagBadUpdate, Message: "m", SessionID: "s1"}
	got := d.LogValue().String()
	if want := "[kind=bad_update message=m session=s1]"; got != want {
		t.Errorf("LogValue %s, want %s", got, want)
	}
}
