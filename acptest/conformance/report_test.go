// This file holds the tests of the report's outputs (JUnit, JSON,
// Markdown, text), the skip list, --strict semantics and Test.

package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/acptest/conformance"
)

// brokenModes is the compliant agent accepting any mode id (a SHOULD).
func brokenModes() *acptest.Agent {
	o := goodOptions()
	o.Methods = map[string]acptest.MethodFunc{"session/set_mode": result(map[string]any{})}
	return acptest.New(o)
}

// TestCheckSkipList: a skipped rule is reported skipped, not graded.
func TestCheckSkipList(t *testing.T) {
	opts := goodPrompts
	opts.Skip = []string{"modes.unknown"}
	rep := gradeAgent(t, brokenModes(), &opts)
	if res, _ := rep.Result("modes.unknown", 1); res.Status != conformance.Skipped {
		t.Fatalf("modes.unknown: %s, want skipped", res.Status)
	}
	if !rep.Passed(true) {
		t.Error("with the only broken rule skipped, the strict report failed")
	}
	_, err := conformance.Run(context.Background(), conformance.PipeTarget(acptest.New(nil).Pipe), &conformance.Options{Skip: []string{"no.such-rule"}})
	if err == nil || !strings.Contains(err.Error(), "no.such-rule") {
		t.Errorf("an unknown skip id: err %v, want one naming it", err)
	}
}

// TestCheckStrictShould: a failed SHOULD rule passes the report, but not
// a strict one.
func TestCheckStrictShould(t *testing.T) {
	opts := goodPrompts
	rep := gradeAgent(t, brokenModes(), &opts)
	if !rep.Passed(false) || rep.Passed(true) {
		t.Fatalf("Passed(false)=%v Passed(true)=%v, want true, false", rep.Passed(false), rep.Passed(true))
	}
}

type junit struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestCheckJUnitAndJSON: the JUnit document parses back with a case per
// result, failures only for failed MUST rules (and SHOULD when strict),
// skips for rules not exercised; the JSON document round-trips.
func TestCheckJUnitAndJSON(t *testing.T) {
	o := goodOptions()
	o.OnPrompt = brokenFor(t, "prompt.stop-reason").breaksTurn()
	opts := goodPrompts
	rep := gradeAgent(t, acptest.New(o), &opts)
	for _, strict := range []bool{false, true} {
		var b bytes.Buffer
		if err := rep.WriteJUnit(&b, strict); err != nil {
			t.Fatal(err)
		}
		var doc junit
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if len(doc.Suites) != 1 || doc.Suites[0].Tests != len(rep.Results) {
			t.Fatalf("suites %d, tests %d; want 1 suite with %d", len(doc.Suites), doc.Suites[0].Tests, len(rep.Results))
		}
		failures, skipped := 0, 0
		for i, c := range doc.Suites[0].Cases {
			res := rep.Results[i]
			if c.Name != res.ID || c.Classname != res.Area {
				t.Errorf("case %d is %s/%s, want %s/%s", i, c.Classname, c.Name, res.Area, res.ID)
			}
			wantFail := res.Status == conformance.Fail && (res.Level == conformance.Must || strict && res.Level == conformance.Should)
			if (c.Failure != nil) != wantFail {
				t.Errorf("%s (%s %s): failure %v, want %v", res.ID, res.Level, res.Status, c.Failure != nil, wantFail)
			}
			if c.Failure != nil {
				failures++
				if !strings.Contains(c.Failure.Text, `"stopReason":"done"`) && res.ID == "prompt.stop-reason" {
					t.Errorf("the failure carries no evidence: %s", c.Failure.Text)
				}
			}
			if wantSkip := res.Status == conformance.NotExercised || res.Status == conformance.Skipped; (c.Skipped != nil) != wantSkip {
				t.Errorf("%s: skipped %v, want %v", res.ID, c.Skipped != nil, wantSkip)
			}
			if c.Skipped != nil {
				skipped++
			}
		}
		if failures == 0 || failures != doc.Suites[0].Failures || skipped != doc.Suites[0].Skipped {
			t.Errorf("counted %d failures, %d skipped; the suite says %d, %d", failures, skipped, doc.Suites[0].Failures, doc.Suites[0].Skipped)
		}
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Protocol v1\n", "| `prompt.stop-reason` | MUST | fail |", "### Findings\n", "- **v1 `prompt.stop-reason`** (MUST, fail; [spec](https://agentclientprotocol.com/protocol/v1/prompt-turn#stop-reasons))", `{"dir":"<","msg":{"jsonrpc":"2.0",`, `"result":{"stopReason":"done"}}}`} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md.String())
		}
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "FAIL           v1 MUST   prompt.stop-reason") {
		t.Errorf("the summary lacks the failed rule:\n%s", text.String())
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back conformance.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	res, _ := back.Result("prompt.stop-reason", 1)
	if res.Status != conformance.Fail || res.Level != conformance.Must || res.Spec != "protocol/v1/prompt-turn#stop-reasons" || len(res.Evidence) == 0 {
		t.Errorf("prompt.stop-reason after a JSON round trip: %+v", res)
	}
}

// TestCheckTestHelper: conformance.Test runs a subtest per result.
func TestCheckTestHelper(t *testing.T) {
	a := acptest.New(goodOptions())
	t.Cleanup(func() { a.Close() })
	opts := goodPrompts
	rep := conformance.Test(t, conformance.PipeTarget(a.Pipe), &opts)
	v1 := 0
	for _, r := range conformance.Rules() {
		if r.Versions == nil || slices.Contains(r.Versions, 1) {
			v1++
		}
	}
	if len(rep.Results) != v1 { // a v1 agent: one per rule of v1
		t.Errorf("%d results, want %d", len(rep.Results), v1)
	}
}
