// This file holds Test, the entry point for an agent's own go test.

package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Test grades the agent and reports each result as a subtest named
// vN/RULE-ID: a failed MUST rule fails its subtest; a failed SHOULD rule,
// a warning, a rule not exercised and a skipped rule are logged and
// skipped (t.Skip), never passed silently. Rules in opts.Skip are
// skipped. It returns the report for further checks.
//
//	func TestConformance(t *testing.T) {
//		conformance.Test(t, conformance.Target{Command: []string{"./my-agent"}}, nil)
//	}
func Test(t *testing.T, target Target, opts *Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), target, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		t.Run(fmt.Sprintf("v%d/%s", res.Protocol, res.ID), func(t *testing.T) {
			msg := fmt.Sprintf("%s %s (%s): %s", res.Level, res.Title, res.Spec, res.Message)
			var ev []string
			for _, e := range res.Evidence {
				ev = append(ev, string(e))
			}
			if len(ev) > 0 {
				msg += "\n" + strings.Join(ev, "\n")
			}
			switch {
			case res.Status == Pass:
			case res.Status == Fail && res.Level == Must:
				t.Error(msg)
			default:
				t.Skip(string(res.Status) + ": " + msg)
			}
		})
	}
	return rep
}
