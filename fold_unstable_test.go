package acp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// foldLines decodes each update and folds it into a session state and a
// turn fold.
func foldLines(t *testing.T, lines ...string) (SessionState, TurnState) {
	t.Helper()
	var st SessionState
	var f fold
	for _, l := range lines {
		u, err := decodeUpdate([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if _, unknown := u.(*UnknownUpdate); unknown {
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
	want := []PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}
	if !cmp.Equal(st.Plan, want) || !cmp.Equal(ts.Plan, want) || st.PlanContent.PlanID() != "p1" {
		t.Fatalf("session plan %+v (%+v), turn plan %+v", st.Plan, st.PlanContent, ts.Plan)
	}
	st, _ = foldLines(t,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"# Plan"}}`)
	if md, ok := st.PlanContent.(*PlanMarkdown); !ok || md.Content != "# Plan" || st.Plan != nil {
		t.Fatalf("after a markdown plan: %+v, entries %+v", st.PlanContent, st.Plan)
	}
	st, _ = foldLines(t, `{"sessionUpdate":"plan_update","plan":{"type":"whiteboard","planId":"p3"}}`)
	if u, ok := st.PlanContent.(*UnknownPlanContent); !ok || u.Type != "whiteboard" {
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
	if _, err := decodeUpdate([]byte(`{"sessionUpdate":"notice","severity":"info"}`)); err == nil {
		t.Fatal("a notice without its required title decoded")
	}
}

func TestFoldCompactionUpdate(t *testing.T) {
	st, _ := foldLines(t,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"We fixed the bug."}]}`)
	c := st.Compaction
	if c == nil || c.CompactionID != "c1" || c.Status != CompactionCompleted || len(c.Summary) != 1 || summaryText(c.Summary) != "We fixed the bug." {
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
	u, err := decodeUpdate([]byte(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"fixed it."}}`))
	if err != nil {
		t.Fatal(err)
	}
	foldSessionUpdate(&st, u)
	if got := summaryText(st.Compaction.Summary); got != "We fixed it." || st.Compaction.Status != CompactionInProgress {
		t.Fatalf("summary %q, status %q", got, st.Compaction.Status)
	}
}

func summaryText(bs []ContentBlock) string {
	out := ""
	for _, b := range bs {
		out += TextOf(b)
	}
	return out
}
