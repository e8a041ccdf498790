package traceview

import (
	"encoding/json"
	"strings"
)

// The page's data, embedded as JSON and rendered by viewer.js. Field names
// are short because a large trace repeats them a million times.

type page struct {
	V     int    `json:"v"` // the data format, for viewer.js
	Title string `json:"title"`
	Stats stats  `json:"stats"`
	// The lists are written by writeData, an element at a time (omitempty
	// takes them out of the marshalled head).
	Conn     []*item    `json:"conn,omitempty"` // what belongs to no session
	Bad      []badLine  `json:"bad,omitempty"`
	Sessions []*session `json:"sessions,omitempty"`
	Frames   []rawFrame `json:"-"` // written by writeFrames, last
}

type stats struct {
	Lines      int    `json:"lines"`
	Frames     int    `json:"frames"`
	Bad        int    `json:"bad"`    // malformed lines
	Listed     int    `json:"listed"` // those of them in page.Bad (MaxMalformed)
	Bytes      int64  `json:"bytes"`
	MaxBytes   int64  `json:"maxBytes"`
	Truncated  bool   `json:"truncated"`
	CutLine    int    `json:"cutLine,omitempty"`
	Timestamps bool   `json:"timestamps"` // some frame has "t"
	Updates    int    `json:"updates"`
	Turns      int    `json:"turns"`
	Agent      string `json:"agent,omitempty"`
	Proto      int    `json:"proto,omitempty"`
}

type rawFrame struct {
	Line int             `json:"n"`
	T    *float64        `json:"t,omitempty"`
	Dir  string          `json:"d"`
	Msg  json.RawMessage `json:"m,omitempty"`
	Note string          `json:"note,omitempty"`
}

type session struct {
	ID    string     `json:"id"`
	How   string     `json:"how"` // "new", "load", "resume", … or "seen" (first seen in an update)
	Agent string     `json:"agent,omitempty"`
	Proto int        `json:"proto,omitempty"`
	Cwd   string     `json:"cwd,omitempty"`
	Segs  []*segment `json:"segs,omitempty"` // written by writeData

	turns int // turn segments in Segs, to number the next one
}

// segment is a turn, or what a session received outside any turn (its
// setup, a load's replay, updates between turns).
type segment struct {
	Kind   string   `json:"kind"` // "turn" or "outside"
	N      int      `json:"n,omitempty"`
	T0     *float64 `json:"t0,omitempty"`
	T1     *float64 `json:"t1,omitempty"`
	Stop   string   `json:"stop,omitempty"`
	Ended  bool     `json:"ended,omitempty"`
	Prompt string   `json:"prompt,omitempty"`
	// Open: the page shows the segment opened at load. It is the trace's
	// last turn, what a reader of a trace looks at first.
	Open   bool           `json:"open,omitempty"`
	Counts map[string]int `json:"counts"`
	Items  []*item        `json:"items,omitempty"` // written by writeData
}

// maxItemFrames bounds the raw frames an item lists; a message of 100 000
// chunks lists the first ones and counts the rest (all are under "All
// frames").
const maxItemFrames = 64

type item struct {
	K     string   `json:"k"` // user, msg, thought, tool, perm, error, note, event, plan
	T     *float64 `json:"t,omitempty"`
	F     []int    `json:"f,omitempty"`
	FN    int      `json:"fn,omitempty"`
	Title string   `json:"title,omitempty"`
	Text  string   `json:"text,omitempty"`
	Tool  *tool    `json:"tool,omitempty"`
	Perm  *perm    `json:"perm,omitempty"`

	msgID string // messageId of a message being streamed
	// buf collects the chunks of a streamed message: appending each to
	// Text would copy the whole message every time, quadratic in its
	// chunks. flush moves it to Text.
	buf *strings.Builder
}

// appendText adds a chunk to the item's text.
func (it *item) appendText(s string) {
	if it.buf == nil {
		it.buf = &strings.Builder{}
		it.buf.WriteString(it.Text)
	}
	it.buf.WriteString(s)
}

// flush makes Text the whole text appended so far.
func (it *item) flush() {
	if it.buf != nil {
		it.Text, it.buf = it.buf.String(), nil
	}
}

func (it *item) addFrame(i int) {
	it.FN++
	if len(it.F) < maxItemFrames {
		it.F = append(it.F, i)
	}
}

type tool struct {
	ID      string    `json:"id"`
	Title   string    `json:"title,omitempty"`
	Kind    string    `json:"kind,omitempty"`
	Status  string    `json:"status,omitempty"`
	Hist    []change  `json:"hist,omitempty"`
	Content []content `json:"content,omitempty"`
	// Was is the content that later updates replaced, oldest first (the
	// last maxContentHist; WasN counts the older ones not kept): the diff
	// of an edit the user rejected stays on the card after the agent
	// replaces it with its refusal.
	Was  []version `json:"was,omitempty"`
	WasN int       `json:"wasN,omitempty"`
	Locs []string  `json:"locs,omitempty"`
	In   string    `json:"in,omitempty"`
	Out  string    `json:"out,omitempty"`
	Perm string    `json:"perm,omitempty"` // the answer to its permission request
	// PermTone is the answer's tone (see perm.Tone).
	PermTone string `json:"permTone,omitempty"`
}

// version is a tool call's content as it was until an update replaced it.
type version struct {
	T       *float64  `json:"t,omitempty"` // when it was replaced
	Content []content `json:"content"`
}

type change struct {
	S string   `json:"s"`
	T *float64 `json:"t,omitempty"`
}

type content struct {
	Type string   `json:"type"` // text, diff, terminal, image, resource, …
	Text string   `json:"text,omitempty"`
	Path string   `json:"path,omitempty"`
	Diff []string `json:"diff,omitempty"` // unified diff lines
	Note string   `json:"note,omitempty"`
}

type perm struct {
	Tool    string   `json:"tool,omitempty"`
	Options []option `json:"options,omitempty"`
	// Answer is "selected", "cancelled" (by the client), "withdrawn" (by
	// the agent, $/cancel_request), "error", or "" when the trace has no
	// answer.
	Answer string   `json:"answer,omitempty"`
	Option string   `json:"option,omitempty"`
	Name   string   `json:"name,omitempty"`
	Err    string   `json:"err,omitempty"`
	MS     *float64 `json:"ms,omitempty"` // from request to answer; nil without timestamps
	// Tone is how the page colours the answer: "allow" for an allow
	// option, "reject" for a reject option or a cancelled request, ""
	// otherwise (see tone).
	Tone string `json:"tone,omitempty"`
}

type option struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Kind string `json:"kind,omitempty"`
	Tone string `json:"tone,omitempty"` // tone(Kind)
}
