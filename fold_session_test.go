package acp

import (
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// foldLines decodes each update and folds it into a session state and a
// turn fold.
func foldLines(t *testing.T, lines ...string) (SessionState, TurnState) {
	t.Helper()
	var st SessionState
	var f fold
	for _, l := range lines {
		u, err := testDecodeUpdate([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if _, unknown := u.(*schema.UnknownUpdate); unknown {
			t.Fatalf("%s decoded as unknown", l)
		}
		if !foldSessionUpdate(&st, u) {
			t.Fatalf("%s is not folded into the session", l)
		}
		f.apply(u)
	}
	return st, f.state()
}

func TestFoldPlanUpdate(t *testing.T) {
	st, ts := foldLines(t,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"},{"bad":1}]}}`)
	want := []schema.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}
	if !cmp.Equal(st.Plan, want) || !cmp.Equal(ts.Plan, want) || st.PlanContent.PlanID() != "p1" {
		t.Fatalf("session plan %+v (%+v), turn plan %+v", st.Plan, st.PlanContent, ts.Plan)
	}
	st, _ = foldLines(t,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"# Plan"}}`)
	if md, ok := st.PlanContent.(*schema.PlanMarkdown); !ok || md.Content != "# Plan" || st.Plan != nil {
		t.Fatalf("after a markdown plan: %+v, entries %+v", st.PlanContent, st.Plan)
	}
	st, _ = foldLines(t, `{"sessionUpdate":"plan_update","plan":{"type":"whiteboard","planId":"p3"}}`)
	if u, ok := st.PlanContent.(*schema.UnknownPlanContent); !ok || u.Type != "whiteboard" {
		t.Fatalf("unknown plan type: %+v", st.PlanContent)
	}
}

func TestFoldPlanRemoved(t *testing.T) {
	add := `{"sessionUpdate":"plan_update","plan":{"type":"file","planId":"p1","uri":"file:///plan.md"}}`
	st, _ := foldLines(t, add, `{"sessionUpdate":"plan_removed","planId":"other"}`)
	if st.PlanContent == nil {
		t.Fatal("removing another plan id cleared the plan")
	}
	st, _ = foldLines(t, add, `{"sessionUpdate":"plan_removed","planId":"p1"}`)
	if st.PlanContent != nil || st.Plan != nil {
		t.Fatalf("plan after removal: %+v %+v", st.PlanContent, st.Plan)
	}
}

func TestFoldNotice(t *testing.T) {
	st, _ := foldLines(t,
		`{"sessionUpdate":"notice","severity":"info","title":"first"}`,
		`{"sessionUpdate":"notice","severity":"quota","title":"Rate limit near","description":"80% used"}`)
	if st.Notice == nil || st.Notice.Title != "Rate limit near" || st.Notice.Severity != "quota" || derefOr(st.Notice.Description) != "80% used" {
		t.Fatalf("notice = %+v", st.Notice)
	}
	if _, err := testDecodeUpdate([]byte(`{"sessionUpdate":"notice","severity":"info"}`)); err == nil {
		t.Fatal("a notice without its required title decoded")
	}
}

func TestFoldCompactionUpdate(t *testing.T) {
	st, _ := foldLines(t,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"We fixed the bug."}]}`)
	c := st.Compaction
	if c == nil || c.CompactionID != "c1" || c.Status != schema.CompactionCompleted || len(c.Summary) != 1 || summaryText(c.Summary) != "We fixed the bug." {
		t.Fatalf("compaction = %+v", c)
	}
	st, _ = foldLines(t,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"old"}]}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c2","status":"failed","error":"too long"}`)
	if c := st.Compaction; c.CompactionID != "c2" || c.Error != "too long" || c.Summary != nil {
		t.Fatalf("a new compaction kept the old one's state: %+v", c)
	}
}

func TestFoldCompactionSummaryChunk(t *testing.T) {
	st, _ := foldLines(t,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"We "}}`)
	u, err := testDecodeUpdate([]byte(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"fixed it."}}`))
	if err != nil {
		t.Fatal(err)
	}
	foldSessionUpdate(&st, u)
	if got := summaryText(st.Compaction.Summary); got != "We fixed it." || st.Compaction.Status != schema.CompactionInProgress {
		t.Fatalf("summary %q, status %q", got, st.Compaction.Status)
	}
}

func summaryText(bs []schema.ContentBlock) string {
	out := ""
	for _, b := range bs {
		out += schema.TextOf(b)
	}
	return out
}

// Several plans live side by side by id, in the order they were created;
// an update replaces its plan in place, a removal drops it, and a snapshot
// taken before either is not written into.
func TestFoldSeveralPlans(t *testing.T) {
	var st SessionState
	var f fold
	apply := func(l string) {
		t.Helper()
		u, err := testDecodeUpdate([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		foldSessionUpdate(&st, u)
		f.apply(u)
	}
	ids := func(ps []schema.PlanContent) (out []string) {
		for _, p := range ps {
			out = append(out, p.PlanID())
		}
		return out
	}
	apply(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"a","entries":[{"content":"1","priority":"low","status":"pending"}]}}`)
	apply(`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"b","content":"# B"}}`)
	apply(`{"sessionUpdate":"plan_update","plan":{"type":"file","planId":"c","uri":"file:///c.md"}}`)
	before := st.Plans
	apply(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"a","entries":[{"content":"2","priority":"low","status":"completed"}]}}`)
	if got := ids(st.Plans); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("plans %v, want a b c", got)
	}
	if e := before[0].(*schema.PlanItems).Entries[0].Content; e != "1" {
		t.Errorf("the update wrote into an earlier snapshot's plans: %q", e)
	}
	if st.PlanContent.PlanID() != "a" || len(st.Plan) != 1 || st.Plan[0].Content != "2" {
		t.Errorf("current plan %v %+v", st.PlanContent.PlanID(), st.Plan)
	}
	if ts := f.state(); ts.PlanID != "a" || len(ts.Plan) != 1 {
		t.Errorf("turn plan %q %+v", ts.PlanID, ts.Plan)
	}
	before = st.Plans
	apply(`{"sessionUpdate":"plan_removed","planId":"b"}`)
	if got := ids(st.Plans); !cmp.Equal(got, []string{"a", "c"}) || len(before) != 3 || before[1].PlanID() != "b" {
		t.Fatalf("plans %v after removing b (before: %v)", got, ids(before))
	}
	if st.PlanContent.PlanID() != "a" {
		t.Errorf("removing another plan changed the current one: %v", st.PlanContent.PlanID())
	}
	apply(`{"sessionUpdate":"plan_removed","planId":"a"}`)
	if st.PlanContent != nil || st.Plan != nil || !cmp.Equal(ids(st.Plans), []string{"c"}) {
		t.Errorf("after removing the current plan: %+v %+v %v", st.PlanContent, st.Plan, ids(st.Plans))
	}
	if ts := f.state(); ts.PlanID != "" || len(ts.Plan) != 0 {
		t.Errorf("the turn still shows the removed plan: %q %+v", ts.PlanID, ts.Plan)
	}
	// A legacy plan update is the current plan; Plans stays as it was.
	apply(`{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`)
	if st.PlanContent != nil || len(st.Plan) != 1 || len(st.Plans) != 1 {
		t.Errorf("after a legacy plan: %+v %+v %v", st.PlanContent, st.Plan, ids(st.Plans))
	}
}
