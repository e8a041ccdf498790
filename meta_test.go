package acp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// The _meta of a session result is kept on the session's state and on its
// change feed; a _meta that is not an object is dropped.
func TestSessionResultMeta(t *testing.T) {
	for _, tc := range []struct{ meta, want string }{
		{`{"claudeCode":{"version":"2"}}`, `{"claudeCode":{"version":"2"}}`},
		{`"not an object"`, ``},
	} {
		c, done := connect(&acptest.Options{Methods: map[string]acptest.MethodFunc{
			"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return json.RawMessage(`{"sessionId":"s1","_meta":` + tc.meta + `}`), nil
			},
		}}, nil)
		ctx := context.Background()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(s.State().Meta); got != tc.want {
			t.Errorf("%s: state meta %s, want %s", tc.meta, got, tc.want)
		}
		var sf acp.SessionFold
		for ev := range s.Events(ctx, 0) {
			sf.Apply(ev)
			if ev.Kind == acp.EventSetup && ev.Setup.SessionID == "" {
				break // the result's setup follows the session's creation
			}
		}
		if got := string(sf.State().Meta); got != tc.want {
			t.Errorf("%s: folded meta %s, want %s", tc.meta, got, tc.want)
		}
		done()
	}
}
