package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// forkAgent advertises sessionCapabilities.fork when fork is set and
// answers session/fork with a new session "f1", sending an update for it
// before the answer (as agents do with available_commands_update).
func forkAgent(t *testing.T, fork bool) (*acp.Client, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var forks []string
	caps := map[string]any{"loadSession": true}
	if fork {
		caps["sessionCapabilities"] = map[string]any{"fork": map[string]any{}}
	}
	c, done := connect(&acptest.Options{
		Capabilities: caps,
		Methods: map[string]acptest.MethodFunc{
			"session/fork": func(_ context.Context, c *acptest.Conn, p json.RawMessage) (any, error) {
				mu.Lock()
				forks = append(forks, string(p))
				mu.Unlock()
				if err := c.Notify("session/update", map[string]any{"sessionId": "f1", "update": map[string]any{
					"sessionUpdate": "available_commands_update", "availableCommands": []any{map[string]any{"name": "web", "description": "search"}},
				}}); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"sessionId":"f1","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]},` +
					`"models":{"currentModelId":"m","availableModels":[{"modelId":"m","name":"M"}]}}`), nil
			},
		},
	}, nil)
	t.Cleanup(done)
	return c, &forks
}

func TestForkSession(t *testing.T) {
	ctx := context.Background()
	c, forks := forkAgent(t, true)
	parent, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := parent.Fork(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.ID() != "f1" || c.Session("f1") != f {
		t.Fatalf("fork id %q, registered %v", f.ID(), c.Session("f1"))
	}
	st := f.State()
	if st.Cwd != parent.State().Cwd || st.Modes == nil || st.Modes.CurrentModeID != "ask" ||
		st.Models == nil || st.Models.CurrentModelID != "m" || len(st.Commands) != 1 {
		t.Fatalf("fork state = %+v", st)
	}
	if len(*forks) != 1 || !strings.Contains((*forks)[0], `"sessionId":"`+parent.ID()+`"`) ||
		!strings.Contains((*forks)[0], `"mcpServers":[]`) {
		t.Fatalf("fork params = %v", *forks)
	}
}

func TestForkSessionNeedsCapability(t *testing.T) {
	ctx := context.Background()
	c, forks := forkAgent(t, false)
	if _, err := c.ForkSession(ctx, &schema.ForkSessionRequest{SessionID: "x"}); !errors.Is(err, acp.ErrNotSupported) {
		t.Fatalf("ForkSession = %v, want ErrNotSupported", err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, nil); !errors.Is(err, acp.ErrNotSupported) {
		t.Fatalf("Fork = %v, want ErrNotSupported", err)
	}
	if len(*forks) != 0 {
		t.Fatalf("sent %v", *forks)
	}
}

func TestForkCapabilityDecoded(t *testing.T) {
	var caps schema.AgentCapabilities
	if err := json.Unmarshal([]byte(`{"sessionCapabilities":{"fork":{}}}`), &caps); err != nil {
		t.Fatal(err)
	}
	if caps.SessionCapabilities.Fork == nil {
		t.Fatal("sessionCapabilities.fork dropped")
	}
	if err := json.Unmarshal([]byte(`{"sessionCapabilities":{"fork":7}}`), &caps); err != nil || caps.SessionCapabilities.Fork != nil {
		t.Fatalf("malformed fork: %v, %+v", err, caps.SessionCapabilities.Fork)
	}
}
