package acptest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A test of client code gets a connected client and the agent in one call;
// the test's cleanup closes both.
func ExampleConnect() {
	t, cleanup := exampleT() // in a test, the test's *testing.T
	defer cleanup()

	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("you said: " + t.PromptText())
			return schema.StopReasonEndTurn, nil
		},
	}, nil)
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hello"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := turn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(stop, turn.State().Messages[0].Text)
	// Output: end_turn you said: hello
}

// exampleT stands in for a *testing.T in examples, which have none.
func exampleT() (testing.TB, func()) {
	t := &fakeT{}
	return t, func() {
		for i := len(t.cleanups) - 1; i >= 0; i-- {
			t.cleanups[i]()
		}
	}
}

type fakeT struct {
	testing.TB // methods not overridden panic (nil)
	cleanups   []func()
}

func (*fakeT) Helper()                        {}
func (t *fakeT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }
func (*fakeT) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (*fakeT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// Connect registers a cleanup that closes the client before the agent: a
// script blocked on the client then sees the connection end, and nothing is
// left running after the test.
func TestConnectCleanup(t *testing.T) {
	var c *acp.Client
	var a *acptest.Agent
	scriptDone := make(chan struct{})
	t.Run("inner", func(t *testing.T) {
		c, a = acptest.Connect(t, &acptest.Options{
			OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
				defer close(scriptDone)
				<-t.Context().Done() // runs until the connection ends
				return schema.StopReasonEndTurn, nil
			},
		}, nil)
		s, err := c.NewSession(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), schema.Text("go")); err != nil {
			t.Fatal(err)
		}
	})
	// The inner test's cleanup has run: the client is closed, and the agent
	// closed and waited for the script.
	select {
	case <-c.Done():
	default:
		t.Error("client still open after the test's cleanup")
	}
	select {
	case <-scriptDone:
	default:
		t.Error("agent script still running after the test's cleanup")
	}
	if err := a.Serve(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, acptest.ErrClosed) {
		t.Errorf("agent still serving after the test's cleanup: Serve = %v", err)
	}
}

func TestConnectFailsTheTest(t *testing.T) {
	ft := &fakeT{}
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("Connect to an agent answering another protocol version did not fail")
		}
		for i := len(ft.cleanups) - 1; i >= 0; i-- {
			ft.cleanups[i]()
		}
		t.Log(r)
	}()
	acptest.Connect(ft, &acptest.Options{ProtocolVersion: 99}, nil)
}

// A script with typed tool calls: acp's enum constants and content types,
// and a typed permission request.
func ExampleSession_AskPermission() {
	t, cleanup := exampleT()
	defer cleanup()

	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			edit := acptest.ToolCallSpec{ID: "e1", Title: "Create notes.md", Kind: schema.ToolKindEdit,
				Content: []any{acptest.Diff("/w/notes.md", nil, "# Notes\n")}}
			t.ToolCall(edit)
			out, err := t.AskPermission(edit)
			if err != nil {
				return "", err
			}
			fmt.Println("agent got:", out.Kind, out.OptionID)
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "e1", Status: schema.ToolCallStatusCompleted})
			return schema.StopReasonEndTurn, nil
		},
	}, &acp.ClientOptions{Permission: acp.AllowAll})
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("take notes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	tc := turn.State().ToolCalls[0]
	fmt.Println("client saw:", tc.Kind, tc.Status)
	fmt.Print(tc.Content[0].(*schema.DiffContent).Unified(3))
	// Output:
	// agent got: selected allow
	// client saw: edit completed
	// --- /dev/null
	// +++ b/w/notes.md
	// @@ -0,0 +1 @@
	// +# Notes
}
