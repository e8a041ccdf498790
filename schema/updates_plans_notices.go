package schema

import (
	"encoding/json"
	"fmt"
)

// The update kinds below were unstable until recently and are stable now:
// notices and compaction since schema 1.25.0, plan operations since 1.34.0
// (see internal/schemagen/stabilised.json). Each is folded (see
// foldPlanOrNoticeUpdate) and, like every update, kept in the turn's
// Updates and on the change feed. Plan operations reach a client that
// advertises them (ClientOptions.PlanOperations); other clients get the
// legacy plan update.

// PlanUpdate ("plan_update") creates the plan its content names by id, or
// replaces the plan of that id whole: a list of entries (complete, with
// every entry's current status), a file, or markdown. A session may have
// several plans at once, told apart by id.
type PlanUpdate struct {
	Plan PlanContent     `json:"plan"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanRemoved ("plan_removed") says the plan with this id is gone; a
// removal of an unknown id is ignored.
type PlanRemoved struct {
	PlanID string          `json:"planId"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// Notice ("notice") is a message the agent wants shown to the user, such
// as a warning that a rate limit is near.
type Notice struct {
	Severity    NoticeSeverity  `json:"severity"`
	Title       string          `json:"title"`
	Description *string         `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// NoticeSeverity is how serious a Notice is. Values the schema does not
// list are kept.
type NoticeSeverity string

const (
	NoticeInfo    NoticeSeverity = "info"
	NoticeWarning NoticeSeverity = "warning"
	NoticeError   NoticeSeverity = "error"
)

// CompactionUpdate ("compaction_update") reports the progress of the
// agent compacting its context; Summary, when sent, replaces the summary
// gathered so far.
type CompactionUpdate struct {
	CompactionID string           `json:"compactionId"`
	Status       CompactionStatus `json:"status"`
	Summary      []ContentBlock   `json:"summary,omitzero"`
	Error        *string          `json:"error,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`
}

// CompactionStatus is the state of a compaction. Values the schema does not
// list are kept.
type CompactionStatus string

const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

// CompactionSummaryChunk ("compaction_summary_chunk") streams one block of
// a compaction's summary.
type CompactionSummaryChunk struct {
	CompactionID string          `json:"compactionId"`
	Content      ContentBlock    `json:"content"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

func (*PlanUpdate) isUpdate()             {}
func (*PlanRemoved) isUpdate()            {}
func (*Notice) isUpdate()                 {}
func (*CompactionUpdate) isUpdate()       {}
func (*CompactionSummaryChunk) isUpdate() {}

func (*PlanUpdate) UpdateKind() string             { return "plan_update" }
func (*PlanRemoved) UpdateKind() string            { return "plan_removed" }
func (*Notice) UpdateKind() string                 { return "notice" }
func (*CompactionUpdate) UpdateKind() string       { return "compaction_update" }
func (*CompactionSummaryChunk) UpdateKind() string { return "compaction_summary_chunk" }

// PlanContent is the content of a PlanUpdate, told apart on the wire by
// "type": *PlanItems ("items"), *PlanFile ("file"), *PlanMarkdown
// ("markdown"), or *UnknownPlanContent (any other type, kept raw).
type PlanContent interface {
	// PlanID is the plan's id ("" for an unknown type).
	PlanID() string
	isPlanContent()
}

// PlanItems is a plan as a list of entries.
type PlanItems struct {
	ID      string          `json:"planId"`
	Entries []PlanEntry     `json:"entries"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// PlanFile is a plan kept in a file the agent names by URI.
type PlanFile struct {
	ID   string          `json:"planId"`
	URI  string          `json:"uri"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanMarkdown is a plan as markdown text.
type PlanMarkdown struct {
	ID string `json:"planId"`
	// Content is the whole plan, whether or not Path is set.
	Content string `json:"content"`
	// Path is the absolute path of the file holding the plan, if any
	// (schema 1.34.0); clients need not read it to show the plan.
	Path *string         `json:"path,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// UnknownPlanContent is plan content of a type this package does not know.
type UnknownPlanContent struct {
	Type string
	Raw  json.RawMessage
}

func (p *PlanItems) PlanID() string        { return p.ID }
func (p *PlanFile) PlanID() string         { return p.ID }
func (p *PlanMarkdown) PlanID() string     { return p.ID }
func (*UnknownPlanContent) PlanID() string { return "" }

func (*PlanItems) isPlanContent()          {}
func (*PlanFile) isPlanContent()           {}
func (*PlanMarkdown) isPlanContent()       {}
func (*UnknownPlanContent) isPlanContent() {}

func (p PlanItems) MarshalJSON() ([]byte, error) {
	type body PlanItems
	p.Entries = orEmpty(p.Entries)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"items", body(p)})
}

func (p PlanFile) MarshalJSON() ([]byte, error) {
	type body PlanFile
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"file", body(p)})
}

func (p PlanMarkdown) MarshalJSON() ([]byte, error) {
	type body PlanMarkdown
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"markdown", body(p)})
}

// MarshalJSON returns Raw unchanged (or a bare {"type":...} when Raw is empty).
func (p UnknownPlanContent) MarshalJSON() ([]byte, error) {
	return marshalRaw(p.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{p.Type})
	})
}

func (u PlanUpdate) MarshalJSON() ([]byte, error) {
	if u.Plan == nil {
		return nil, fmt.Errorf("acp: plan_update: Plan is nil")
	}
	type body PlanUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"plan_update", body(u)})
}

func (u PlanRemoved) MarshalJSON() ([]byte, error) {
	type body PlanRemoved
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"plan_removed", body(u)})
}

func (u Notice) MarshalJSON() ([]byte, error) {
	type body Notice
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"notice", body(u)})
}

func (u CompactionUpdate) MarshalJSON() ([]byte, error) {
	type body CompactionUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"compaction_update", body(u)})
}

func (u CompactionSummaryChunk) MarshalJSON() ([]byte, error) {
	if u.Content == nil {
		return nil, fmt.Errorf("acp: compaction_summary_chunk: Content is nil")
	}
	type body CompactionSummaryChunk
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"compaction_summary_chunk", body(u)})
}
