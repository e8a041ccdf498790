package acp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// rawEq compares json.RawMessage by bytes (nil and empty alike).
var rawEq = cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })

// scriptedTurn runs one turn of an acptest agent whose turn script sends
// updates (each a JSON object) and ends with stop, and returns the session
// and the turn once it ended. Folding the turn's and the session's events
// must give their states: the feed carries everything the fold keeps.
func scriptedTurn(t *testing.T, copts *acp.ClientOptions, stop schema.StopReason, updates ...string) (*acp.Session, *acp.Turn) {
	t.Helper()
	c, done := connect(&acptest.Options{
		OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
			for _, u := range updates {
				if err := tu.Update(json.RawMessage(u)); err != nil {
					return "", err
				}
			}
			return stop, nil
		},
	}, copts)
	t.Cleanup(done)
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	var tf acp.TurnFold
	for ev := range turn.Events(ctx, 0) {
		tf.Apply(ev)
	}
	if d := cmp.Diff(turn.State(), tf.State(), rawEq); d != "" {
		t.Errorf("TurnFold differs from Turn.State (-state +fold):\n%s", d)
	}
	st := s.State()
	s.Release()
	var sf acp.SessionFold
	for ev := range s.Events(ctx, 0) {
		sf.Apply(ev)
	}
	if d := cmp.Diff(st, sf.State(), rawEq); d != "" {
		t.Errorf("SessionFold differs from Session.State (-state +fold):\n%s", d)
	}
	return s, turn
}

// Plan operations (stable since schema 1.34.0): plan_update creates or
// replaces a plan by id, several at once; plan_removed removes one (an
// unknown id is ignored); the client advertises them with PlanOperations.
func TestPlanOperationsScenario(t *testing.T) {
	s, turn := scriptedTurn(t, &acp.ClientOptions{PlanOperations: true}, schema.StopReasonEndTurn,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"build","entries":[{"content":"compile","priority":"high","status":"in_progress"}]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"notes","content":"# Notes","path":"/w/PLAN.md"}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"build","entries":[{"content":"compile","priority":"high","status":"completed"},{"content":"test","priority":"medium","status":"pending"}]}}`,
		`{"sessionUpdate":"plan_removed","planId":"nobody"}`,
		`{"sessionUpdate":"plan_removed","planId":"notes"}`,
	)
	st := s.State()
	if len(st.Plans) != 1 || st.Plans[0].PlanID() != "build" {
		t.Fatalf("plans = %+v, want only build", st.Plans)
	}
	items := st.Plans[0].(*schema.PlanItems)
	if len(items.Entries) != 2 || items.Entries[0].Status != "completed" {
		t.Errorf("build plan = %+v, want its replacement", items.Entries)
	}
	if st.PlanContent == nil || st.PlanContent.PlanID() != "build" || len(st.Plan) != 2 {
		t.Errorf("current plan %+v with %d entries; want build, the latest update still present", st.PlanContent, len(st.Plan))
	}
	ts := turn.State()
	if ts.PlanID != "build" || len(ts.Plan) != 2 {
		t.Errorf("turn plan %q %+v", ts.PlanID, ts.Plan)
	}
}

// A removed current plan leaves no current plan, and the markdown plan's
// path is kept.
func TestPlanRemovedCurrentScenario(t *testing.T) {
	s, turn := scriptedTurn(t, &acp.ClientOptions{PlanOperations: true}, schema.StopReasonEndTurn,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"a","entries":[]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"b","content":"# B","path":"/w/B.md"}}`,
		`{"sessionUpdate":"plan_removed","planId":"a"}`,
	)
	st := s.State()
	if len(st.Plans) != 1 || st.PlanContent == nil || st.PlanContent.PlanID() != "b" {
		t.Fatalf("plans %+v, current %+v", st.Plans, st.PlanContent)
	}
	if md := st.PlanContent.(*schema.PlanMarkdown); md.Path == nil || *md.Path != "/w/B.md" {
		t.Errorf("markdown plan path = %v", md.Path)
	}
	if ts := turn.State(); ts.PlanID != "" || len(ts.Plan) != 0 {
		t.Errorf("turn plan %q %+v after a markdown plan", ts.PlanID, ts.Plan)
	}
	s, _ = scriptedTurn(t, nil, schema.StopReasonEndTurn,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"a","entries":[]}}`,
		`{"sessionUpdate":"plan_removed","planId":"a"}`)
	if st := s.State(); st.Plans != nil || st.PlanContent != nil {
		t.Errorf("after removing the only plan: %+v %+v", st.Plans, st.PlanContent)
	}
}

// Notices and compaction (stable since schema 1.25.0), advertised with
// Notices and Compaction.
func TestNoticeAndCompactionScenario(t *testing.T) {
	s, _ := scriptedTurn(t, &acp.ClientOptions{Notices: true, Compaction: true}, schema.StopReasonEndTurn,
		`{"sessionUpdate":"notice","severity":"warning","title":"Rate limit near","description":"80% used"}`,
		`{"sessionUpdate":"compaction_update","compactionId":"k1","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"k1","content":{"type":"text","text":"We fixed "}}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"k1","content":{"type":"text","text":"the bug."}}`,
		`{"sessionUpdate":"compaction_update","compactionId":"k1","status":"completed"}`,
	)
	st := s.State()
	if st.Notice == nil || st.Notice.Severity != schema.NoticeWarning || st.Notice.Title != "Rate limit near" {
		t.Errorf("notice = %+v", st.Notice)
	}
	c := st.Compaction
	if c == nil || c.Status != schema.CompactionCompleted || len(c.Summary) != 2 || schema.TextOf(c.Summary[0])+schema.TextOf(c.Summary[1]) != "We fixed the bug." {
		t.Errorf("compaction = %+v", c)
	}
}

// A turn that the agent ends with the stop reason "error" (the error stop
// reason of the schema's session activity) says so in its state.
func TestErrorStopReasonScenario(t *testing.T) {
	_, turn := scriptedTurn(t, nil, schema.StopReasonError)
	if st := turn.State(); st.StopReason != schema.StopReasonError {
		t.Errorf("stop reason = %q, want %q", st.StopReason, schema.StopReasonError)
	}
}
