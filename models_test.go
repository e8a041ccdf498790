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

// geminiModels is the models state gemini-cli answers session/new with.
const geminiModels = `{"availableModels":[{"modelId":"auto","name":"Auto","description":"Let Gemini CLI decide"},` +
	`{"modelId":"gemini-2.5-pro","name":"gemini-2.5-pro"}],"currentModelId":"auto"}`

// modelsAgent answers session/new with models (when models is not "") and
// records the session/set_model requests it gets.
func modelsAgent(t *testing.T, models string, setModel func(params json.RawMessage) error) (*acp.Client, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var sets []string
	opts := &acptest.Options{Methods: map[string]acptest.MethodFunc{
		"session/new": func(ctx context.Context, c *acptest.Conn, params json.RawMessage) (any, error) {
			res := map[string]any{"sessionId": "s1"}
			if models != "" {
				res["models"] = json.RawMessage(models)
			}
			return res, nil
		},
		"session/set_model": func(ctx context.Context, c *acptest.Conn, params json.RawMessage) (any, error) {
			mu.Lock()
			sets = append(sets, string(params))
			mu.Unlock()
			if setModel != nil {
				if err := setModel(params); err != nil {
					return nil, err
				}
			}
			return map[string]any{}, nil
		},
	}}
	c, done := connect(opts, nil)
	t.Cleanup(done)
	return c, &sets
}

func TestModelsFromNewSessionAndSetModel(t *testing.T) {
	ctx := context.Background()
	c, sets := modelsAgent(t, geminiModels, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if st.Models == nil || st.Models.CurrentModelID != "auto" || len(st.Models.AvailableModels) != 2 ||
		st.Models.AvailableModels[0].Description != "Let Gemini CLI decide" {
		t.Fatalf("models = %+v", st.Models)
	}
	err = s.SetModel(ctx, "gpt-5")
	if err == nil || !strings.Contains(err.Error(), "valid: auto, gemini-2.5-pro") {
		t.Fatalf("SetModel(unknown) = %v, want an error naming the valid models", err)
	}
	if len(*sets) != 0 {
		t.Fatalf("an unknown model was sent: %v", *sets)
	}
	if err := s.SetModel(ctx, "gemini-2.5-pro"); err != nil {
		t.Fatal(err)
	}
	if got := s.State().Models.CurrentModelID; got != "gemini-2.5-pro" {
		t.Fatalf("current model after SetModel = %q", got)
	}
	if st.Models.CurrentModelID != "auto" {
		t.Fatal("SetModel changed an earlier snapshot")
	}
	if len(*sets) != 1 || !strings.Contains((*sets)[0], `"modelId":"gemini-2.5-pro"`) || !strings.Contains((*sets)[0], `"sessionId":"s1"`) {
		t.Fatalf("set_model params = %v", *sets)
	}
}

func TestSetModelWithoutModelsSendsNothing(t *testing.T) {
	ctx := context.Background()
	c, sets := modelsAgent(t, "", nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.State().Models != nil {
		t.Fatalf("models = %+v from an agent that offered none", s.State().Models)
	}
	if err := s.SetModel(ctx, "auto"); !errors.Is(err, acp.ErrNotSupported) {
		t.Fatalf("SetModel = %v, want ErrNotSupported", err)
	}
	if len(*sets) != 0 {
		t.Fatalf("sent %v", *sets)
	}
}

func TestSetModelRefusedKeepsState(t *testing.T) {
	ctx := context.Background()
	c, _ := modelsAgent(t, geminiModels, func(json.RawMessage) error {
		return &acptest.Error{Code: -32602, Message: "no such model"}
	})
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(ctx, "gemini-2.5-pro"); err == nil {
		t.Fatal("SetModel succeeded although the agent refused")
	}
	if got := s.State().Models.CurrentModelID; got != "auto" {
		t.Fatalf("current model = %q after a refused set", got)
	}
}

// A malformed models state reads as absent: the session still opens.
func TestMalformedModelsReadAsAbsent(t *testing.T) {
	for _, m := range []string{`"auto"`, `{"availableModels":[]}`, `[1]`} {
		var res schema.NewSessionResponse
		if err := json.Unmarshal([]byte(`{"sessionId":"s","models":`+m+`}`), &res); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if res.Models != nil {
			t.Errorf("%s: models = %+v, want nil", m, res.Models)
		}
	}
	var res schema.LoadSessionResponse
	if err := json.Unmarshal([]byte(`{"models":{"currentModelId":"a","availableModels":[{"modelId":"a","name":"A"},{"name":"no id"}]}}`), &res); err != nil {
		t.Fatal(err)
	}
	if res.Models == nil || len(res.Models.AvailableModels) != 1 {
		t.Fatalf("models = %+v, want the invalid entry dropped", res.Models)
	}
}

// The session's change feed carries the models and SetModel's result.
func TestModelsInSessionFeed(t *testing.T) {
	ctx := context.Background()
	c, _ := modelsAgent(t, geminiModels, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(ctx, "gemini-2.5-pro"); err != nil {
		t.Fatal(err)
	}
	var sf acp.SessionFold
	for ev := range s.Events(ctx, 0) {
		sf.Apply(ev)
		if ev.Kind == acp.EventSetup && ev.Setup.Models != nil && ev.Setup.Models.CurrentModelID == "gemini-2.5-pro" {
			break
		}
	}
	if got := sf.State().Models; got == nil || got.CurrentModelID != "gemini-2.5-pro" || len(got.AvailableModels) != 2 {
		t.Fatalf("folded models = %+v", got)
	}
}
