// This file holds the tests of `acp check`: the demo agent green, --json,
// --junit and --trace, a broken and a hung agent, --url, usage errors.

package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// An agent that breaks one MUST rule (its stop reason is not in the
	// schema), and one that never answers initialize.
	acptest.Register("check-bad-stop", func() *acptest.Agent {
		// A process per connection keeps no sessions: it offers no way back to one.
		return acptest.New(&acptest.Options{Capabilities: map[string]any{}, OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("hi")
			return "finished", nil
		}})
	})
	acptest.Register("check-hung", func() *acptest.Agent {
		return acptest.New(&acptest.Options{IgnoreStdinEOF: true,
			Methods: map[string]acptest.MethodFunc{"initialize": acptest.NeverAnswer}})
	})
}

type checkDoc struct {
	Agent    struct{ Name string }
	Versions []int
	Passed   bool
	Strict   bool
	Results  []struct {
		ID, Level, Spec, Status, Message string
		Protocol                         int
		Evidence                         []json.RawMessage
	}
}

func (d *checkDoc) status(id string) string {
	for _, r := range d.Results {
		if r.ID == id {
			return r.Status
		}
	}
	return ""
}

// TestCheckDemoGreen: `acp check` with no agent grades the demo agent:
// exit 0, a summary grouped by area, and a trace acp view can read; in
// v2 its sessions are resumed and replayed, and its /background watcher
// followed to its end.
func TestCheckDemoGreen(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "check.jsonl")
	out, errOut, code := runCLI(t, "", "check", "--trace", trace)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"agent acp-demo", "\ncancellation\n", "PASS", " 0 fail (0 MUST)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	for _, rule := range []string{"v2.resume-replay", "v2.resume-ids", "v2.resume-state", "v2.close", "v2.background", "v2.background-ends"} {
		if !regexp.MustCompile(`PASS +v2 MUST +` + regexp.QuoteMeta(rule) + ` `).MatchString(out) {
			t.Errorf("the summary does not pass %s in v2:\n%s", rule, out)
		}
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), `"note":"conformance: scenario cancel (protocol 1)"`) || !strings.Contains(string(b), `"method":"session/cancel"`) {
		t.Fatalf("the trace lacks the scenario notes or frames (err %v)", err)
	}
	page, errOut, code := runCLI(t, "", "view", trace)
	if code != 0 || !strings.Contains(page, "<html") {
		t.Fatalf("acp view of the check trace: exit %d %s", code, errOut)
	}
}

// TestCheckJSONAndJUnit: --json prints one document; --junit writes XML
// that parses back; a broken agent exits 1 naming its rule.
func TestCheckJSONAndJUnit(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "check.xml")
	args := append([]string{"check", "--json", "--junit", junit, "--timeout", "10s"}, agentArgs(t, "check-bad-stop")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var doc checkDoc
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if dec.More() {
		t.Error("--json printed more than one document")
	}
	if doc.Passed || doc.status("prompt.stop-reason") != "fail" || doc.status("init.answers") != "pass" {
		t.Fatalf("passed %v, prompt.stop-reason %q, init.answers %q", doc.Passed, doc.status("prompt.stop-reason"), doc.status("init.answers"))
	}
	for _, r := range doc.Results {
		var ev bytes.Buffer
		if len(r.Evidence) > 0 {
			json.Compact(&ev, r.Evidence[0])
		}
		if r.ID == "prompt.stop-reason" && (r.Level != "MUST" || r.Spec != "protocol/v1/prompt-turn#stop-reasons" ||
			!strings.Contains(ev.String(), `"stopReason":"finished"`)) {
			t.Errorf("prompt.stop-reason: %+v", r)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &x); err != nil || len(x.Suites) != 1 {
		t.Fatalf("--junit: %v\n%s", err, b)
	}
	failed := []string{}
	for _, c := range x.Suites[0].Cases {
		if c.Failure != nil {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) != 1 || failed[0] != "prompt.stop-reason" || x.Suites[0].Failures != 1 {
		t.Errorf("JUnit failures %v (suite says %d), want [prompt.stop-reason]", failed, x.Suites[0].Failures)
	}
}

// TestCheckHungAgentExits1: an agent that never answers is killed and
// reported, bounded by --timeout.
func TestCheckHungAgentExits1(t *testing.T) {
	args := append([]string{"check", "--json", "--timeout", "1s"}, agentArgs(t, "check-hung")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var doc checkDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.status("init.answers") != "fail" {
		t.Errorf("init.answers %q, want fail", doc.status("init.answers"))
	}
}

// TestCheckUsageErrors exit 2.
func TestCheckUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--protocol", "3"},
		{"check", "--skip", "no.such-rule"},
		{"check", "--timeout", "0s"},
		{"check", "--url", "wss://example.com/acp", "--", "agent"},
		{"check", "--no-such-flag"},
		{"check", "--", "/no/such/agent-binary"},
	} {
		_, errOut, code := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "acp check") && !strings.Contains(errOut, "flag provided but not defined") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

// TestCheckURL grades a remote agent: the demo served over WebSocket, one
// agent per connection (so a session does not outlive its connection, and
// load and resume, v2's replaying resume too, are skipped).
func TestCheckURL(t *testing.T) {
	ts := wsDemo(t)
	u := strings.Replace(ts.URL, "http://", "ws://", 1)
	out, errOut, code := runCLI(t, "", "check", "--json", "--url", u, "--header", "Authorization: Bearer T",
		"--cancel-prompt", "/slow", "--skip", "session.load,session.resume,v2.resume-replay")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var doc checkDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Agent.Name != "acp-demo" || doc.status("session.load") != "skipped" || doc.status("cancel.stop-reason") != "pass" || doc.status("session.close") != "pass" {
		t.Errorf("agent %q, session.load %q, cancel.stop-reason %q, session.close %q", doc.Agent.Name,
			doc.status("session.load"), doc.status("cancel.stop-reason"), doc.status("session.close"))
	}
}
