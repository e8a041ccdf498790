package acp

import (
	"github.com/acpclient/acp/schema"
	"slices"
)

// The session-level fold of plan operations, notices and compaction
// (updates_plans_notices.go): one function per kind. Like every fold they run on
// the reader goroutine under the session's lock, copy what snapshots may
// share instead of writing into it, and never call user code.

// CompactionState is what the agent said about its latest context
// compaction: its id, status, error and summary (the compaction_update's
// summary, or the compaction_summary_chunk blocks in order).
type CompactionState struct {
	CompactionID string                  `json:"compactionId"`
	Status       schema.CompactionStatus `json:"status,omitempty"`
	Error        string                  `json:"error,omitempty"`
	Summary      []schema.ContentBlock   `json:"summary,omitempty"`
}

// foldPlanOrNoticeUpdate folds one of these kinds into st and reports
// whether u was one.
func foldPlanOrNoticeUpdate(st *SessionState, u schema.Update) bool {
	switch u := u.(type) {
	case *schema.PlanUpdate:
		foldPlanUpdate(st, u)
	case *schema.PlanRemoved:
		foldPlanRemoved(st, u)
	case *schema.Notice:
		foldNotice(st, u)
	case *schema.CompactionUpdate:
		foldCompactionUpdate(st, u)
	case *schema.CompactionSummaryChunk:
		foldCompactionSummaryChunk(st, u)
	default:
		return false
	}
	return true
}

// foldPlanUpdate creates or replaces, in Plans, the plan of the update's
// id (a new id goes last), and makes it the current one: PlanContent holds
// it whatever its type, and Plan its entries (none for a file or markdown
// plan). Plans is copied, never written into: snapshots share it.
func foldPlanUpdate(st *SessionState, u *schema.PlanUpdate) {
	id := u.Plan.PlanID()
	i := slices.IndexFunc(st.Plans, func(p schema.PlanContent) bool { return p.PlanID() == id })
	if _, unknown := u.Plan.(*schema.UnknownPlanContent); unknown {
		// An unknown type has no id to track it by: it is the current
		// plan, and Plans keeps only the plans it can tell apart.
		i = -2
	}
	switch {
	case i >= 0:
		plans := slices.Clone(st.Plans)
		plans[i] = u.Plan
		st.Plans = plans
	case i == -1:
		st.Plans = append(slices.Clip(st.Plans), u.Plan)
	}
	st.PlanContent = u.Plan
	st.Plan = nil
	if items, ok := u.Plan.(*schema.PlanItems); ok {
		st.Plan = items.Entries
	}
}

// foldPlanRemoved drops the plan of this id from Plans, and clears the
// current plan when it is the one removed; an unknown id changes nothing.
func foldPlanRemoved(st *SessionState, u *schema.PlanRemoved) {
	if i := slices.IndexFunc(st.Plans, func(p schema.PlanContent) bool { return p.PlanID() == u.PlanID }); i >= 0 {
		st.Plans = slices.Delete(slices.Clone(st.Plans), i, i+1)
		if len(st.Plans) == 0 {
			st.Plans = nil
		}
	}
	if st.PlanContent != nil && st.PlanContent.PlanID() == u.PlanID {
		st.PlanContent, st.Plan = nil, nil
	}
}

// foldNotice keeps the latest notice; every notice stays on the change
// feed and in the turn's Updates.
func foldNotice(st *SessionState, u *schema.Notice) {
	st.Notice = u
}

// foldCompactionUpdate records a compaction's status. An update of another
// compaction id starts afresh; a summary replaces the one gathered so far.
func foldCompactionUpdate(st *SessionState, u *schema.CompactionUpdate) {
	c := compactionFor(st, u.CompactionID)
	c.Status = u.Status
	c.Error = derefOr(u.Error)
	if u.Summary != nil {
		// Clipped: a later chunk must copy, never append into the update's
		// array, which every fold of this update shares.
		c.Summary = slices.Clip(u.Summary)
	}
	st.Compaction = c
}

// foldCompactionSummaryChunk appends one block to the compaction's summary.
func foldCompactionSummaryChunk(st *SessionState, u *schema.CompactionSummaryChunk) {
	c := compactionFor(st, u.CompactionID)
	c.Summary = append(c.Summary, u.Content)
	st.Compaction = c
}

// compactionFor returns a copy of the session's compaction state when it is
// the one with this id, else a fresh one, so that the fold never writes
// through a pointer a snapshot was taken from.
func compactionFor(st *SessionState, id string) *CompactionState {
	if st.Compaction != nil && st.Compaction.CompactionID == id {
		c := *st.Compaction
		return &c
	}
	return &CompactionState{CompactionID: id}
}
