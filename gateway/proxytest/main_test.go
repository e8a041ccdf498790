//go:build unix

package proxytest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"go.uber.org/goleak"
)

// backendEnv names, in the agent's environment, the backend that started
// it: the prompt "backend" answers with it, which is how the tests see
// where the proxy routed a connection.
const backendEnv = "PROXYTEST_BACKEND"

// sharedSession is a session every agent process knows, on every backend:
// an agent whose sessions live where all backends reach them (a shared
// directory or store). Sessions made with session/new live only in the
// process that made them, like the demo agent's.
const sharedSession = "shared"

func agent() *acptest.Agent {
	return acptest.New(&acptest.Options{
		History: map[string][]any{sharedSession: nil},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			text := t.PromptText()
			word, arg, _ := strings.Cut(text, " ")
			switch word {
			case "backend":
				return "end_turn", t.Say(os.Getenv(backendEnv))
			case "chunks":
				n, _ := strconv.Atoi(arg)
				for range n {
					if err := t.Say("x"); err != nil {
						return "", err
					}
				}
				return "end_turn", nil
			case "permission":
				out, err := t.RequestPermission(acptest.ToolCallSpec{ID: "tc-1", Title: "Edit?"}, []schema.PermissionOption{
					{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
					{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
				})
				if err != nil {
					return "", err
				}
				choice, _, _ := acptest.ParseOutcome(out)
				return "end_turn", t.Say("outcome:" + choice)
			case "wait":
				t.Say("waiting")
				select {
				case <-t.Cancelled():
					return "cancelled", nil
				case <-t.Context().Done():
					return "", t.Context().Err()
				}
			}
			return "end_turn", t.Say("echo:" + text)
		},
	})
}

func TestMain(m *testing.M) {
	acptest.Register("proxyagent", agent)
	acptest.MainIfAgent()
	goleak.VerifyTestMain(m)
}
