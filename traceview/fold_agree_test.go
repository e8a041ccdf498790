package traceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The viewer folds updates into its page with a fold of its own
// (builder.update, toolCard): it cannot fold through the client's
// (acp.TurnFold), because it reads traces through the protocol package
// alone (internal/arrows: traceview ↛ acp). These tests keep the two folds
// from drifting apart: every fixture of the client's fold
// (testdata/turns, whose turn.json TestGoldenTurns checks against the
// client's fold) and every recorded transcript (testdata/transcripts,
// whose <name>.state.json TestRealAgentTranscripts and the e2e transcript
// test check against the client driven through the recording) is folded
// by the viewer, and what both show of each turn must agree: the agent's
// text and thoughts, each tool call's title, kind, status and content
// items, the plan, the stop reason.

// turnView is what both folds must agree on for one turn.
type turnView struct {
	Stop     string
	Messages []string // the agent's message texts, in order of first appearance
	Thoughts []string
	Tools    []toolView // by id
	Plan     []string   // "[status] content"
}

type toolView struct {
	ID, Title, Kind, Status string
	Content                 int // content items
}

// goldenTurn is the client's TurnState as its JSON golden holds it.
type goldenTurn struct {
	StopReason string          `json:"stopReason"`
	Messages   []goldenMessage `json:"messages"`
	Thoughts   []goldenMessage `json:"thoughts"`
	ToolCalls  []struct {
		ID      string            `json:"toolCallId"`
		Title   string            `json:"title"`
		Kind    string            `json:"kind"`
		Status  string            `json:"status"`
		Content []json.RawMessage `json:"content"`
	} `json:"toolCalls"`
	Plan []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"plan"`
	Cancelled bool `json:"cancelled"`
}

// goldenMessage is a Message as the client writes it: its text, and its
// blocks when they are more than text.
type goldenMessage struct {
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// shown is the message as the viewer shows it: a block other than text
// is a placeholder there (blocksText), and listed apart from the text in
// the client's Message (Content holds only what is not text).
func (m goldenMessage) shown() string {
	if len(m.Content) > 0 {
		return m.Text + blocksText(m.Content)
	}
	return m.Text
}

func (g goldenTurn) view() turnView {
	v := turnView{Stop: g.StopReason}
	for _, m := range g.Messages {
		v.Messages = append(v.Messages, m.shown())
	}
	for _, m := range g.Thoughts {
		v.Thoughts = append(v.Thoughts, m.shown())
	}
	for _, tc := range g.ToolCalls {
		v.Tools = append(v.Tools, toolView{ID: tc.ID, Title: tc.Title, Kind: tc.Kind, Status: tc.Status, Content: len(tc.Content)})
	}
	for _, e := range g.Plan {
		v.Plan = append(v.Plan, fmt.Sprintf("[%s] %s", e.Status, e.Content))
	}
	return v.sorted()
}

func (v turnView) sorted() turnView {
	slices.SortFunc(v.Tools, func(a, b toolView) int { return strings.Compare(a.ID, b.ID) })
	return v
}

// pageTurn is the viewer's view of one turn segment. Text items of one
// kind with the same message id are one message, as in the client's
// fold; items without an id with nothing between them are one message
// too (the viewer starts a new item after a tool call's card, say, and
// the client a new message).
func pageTurn(g *segment) turnView {
	v := turnView{Stop: g.Stop}
	texts := func(k string) []string {
		var out []string
		byID := map[string]int{}
		last := -1 // index of the previous text item's message, when it was of kind k
		for _, it := range g.Items {
			if it.K != k {
				last = -1
				continue
			}
			switch i, ok := byID[it.msgID]; {
			case it.msgID != "" && ok:
				out[i] += it.Text
			case it.msgID == "" && last >= 0:
				out[last] += it.Text
			default:
				out = append(out, it.Text)
				if it.msgID != "" {
					byID[it.msgID] = len(out) - 1
				}
			}
			last = len(out) - 1
			if it.msgID != "" {
				last = -1 // a message with an id only continues by its id
			}
		}
		return out
	}
	v.Messages, v.Thoughts = texts("msg"), texts("thought")
	for _, it := range g.Items {
		switch {
		case it.K == "tool" && it.Tool != nil:
			tc := it.Tool
			v.Tools = append(v.Tools, toolView{ID: tc.ID, Title: tc.Title, Kind: tc.Kind, Status: tc.Status, Content: len(tc.Content)})
		case it.K == "plan":
			v.Plan = nil // the latest plan is the turn's
			if it.Text != "" {
				v.Plan = strings.Split(it.Text, "\n")
			}
		}
	}
	return v.sorted()
}

// normalise applies, to the viewer's view, the rules of the client's fold
// that the viewer leaves out on purpose, so that what is left to compare
// is what both claim to show alike:
//   - the client marks a cancelled turn's unfinished tool calls cancelled
//     (a local status, ToolCallStatusCancelled); the viewer shows what the
//     agent sent;
//   - the client defaults a tool call's kind to other and its status to
//     pending, and maps a kind it does not know to other; the viewer
//     shows the wire's, or nothing;
//   - a cancelled turn's stop reason is cancelled in the client whatever
//     the agent answered; the viewer shows the answer;
//   - a prompt answered with an error has no stop reason in the client;
//     the viewer says error.
func normalise(page, golden turnView, cancelled bool) turnView {
	if cancelled && golden.Stop == "cancelled" || page.Stop == "error" && golden.Stop == "" {
		page.Stop = golden.Stop
	}
	byID := map[string]toolView{}
	for _, tc := range golden.Tools {
		byID[tc.ID] = tc
	}
	for i := range page.Tools {
		p := &page.Tools[i]
		g, ok := byID[p.ID]
		if !ok {
			continue
		}
		if cancelled && g.Status == "cancelled" && p.Status != "completed" && p.Status != "failed" {
			p.Status = g.Status
		}
		if p.Status == "" && g.Status == "pending" {
			p.Status = g.Status
		}
		if g.Kind == "other" && p.Kind != g.Kind {
			p.Kind = g.Kind
		}
	}
	return page
}

func TestFoldAgreesWithClientOnFixtures(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/turns/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no fixtures in ../testdata/turns")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files := txtarFiles(data)
			updates, ok := files["updates.jsonl"]
			if !ok {
				t.Fatal("no updates.jsonl")
			}
			var g goldenTurn
			if err := json.Unmarshal(files["turn.json"], &g); err != nil {
				t.Fatalf("turn.json: %v", err)
			}
			p, _, err := load(bytes.NewReader(traceOfTurn(t, updates, g.StopReason)), Options{}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			turns := pageTurns(p)
			if len(turns) != 1 {
				t.Fatalf("the page has %d turns, want 1", len(turns))
			}
			want := g.view()
			got := normalise(pageTurn(turns[0]), want, g.Cancelled)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the viewer's fold and the client's differ (-client +viewer):\n%s", diff)
			}
		})
	}
}

func TestFoldAgreesWithClientOnTranscripts(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/transcripts/*.jsonl")
	if len(paths) == 0 {
		t.Fatal("no transcripts in ../testdata/transcripts")
	}
	checked := 0
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".state.json")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Steps []struct {
					Method string      `json:"method"`
					Turn   *goldenTurn `json:"turn"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			// The client's driver replays the recording's steps until one
			// fails as it failed there: a prompt it did not get to has no
			// step, and a prompt that failed none of its turn.
			var want []*goldenTurn
			for _, s := range st.Steps {
				if s.Method == "session/prompt" {
					want = append(want, s.Turn)
				}
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, _, err := load(f, Options{}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			turns := pageTurns(p)
			if len(turns) < len(want) {
				t.Fatalf("the page has %d turns, the client's steps %d prompts", len(turns), len(want))
			}
			for i := range want {
				if want[i] == nil {
					continue
				}
				w := want[i].view()
				got := normalise(pageTurn(turns[i]), w, want[i].Cancelled)
				if diff := cmp.Diff(w, got); diff != "" {
					t.Errorf("turn %d: the viewer's fold and the client's differ (-client +viewer):\n%s", i+1, diff)
				}
			}
			for _, w := range want {
				if w != nil {
					checked++
				}
			}
		})
	}
	if checked == 0 {
		t.Error("no transcript had a turn to compare")
	}
}

// pageTurns returns the turn segments of every session, in order.
func pageTurns(p *page) []*segment {
	var out []*segment
	for _, s := range p.Sessions {
		for _, g := range s.Segs {
			if g.Kind == "turn" {
				out = append(out, g)
			}
		}
	}
	return out
}

// traceOfTurn wraps a fixture's updates in the trace of one turn:
// session/new, session/prompt, the updates, the answer with stop.
func traceOfTurn(t *testing.T, updates []byte, stop string) []byte {
	t.Helper()
	if stop == "" {
		stop = "end_turn"
	}
	var b bytes.Buffer
	line := func(dir string, msg any) {
		m, err := json.Marshal(map[string]any{"dir": dir, "msg": msg})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(m)
		b.WriteByte('\n')
	}
	line(">", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": map[string]any{"cwd": "/w", "mcpServers": []any{}}})
	line("<", map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"sessionId": "s1"}})
	line(">", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
	for _, u := range bytes.Split(bytes.TrimSpace(updates), []byte("\n")) {
		if len(bytes.TrimSpace(u)) == 0 {
			continue
		}
		line("<", map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1", "update": json.RawMessage(u)}})
	}
	line("<", map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"stopReason": stop}})
	return b.Bytes()
}

// txtarFiles reads the files of a txtar archive (the comment is left out).
func txtarFiles(data []byte) map[string][]byte {
	files := map[string][]byte{}
	var cur string
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") {
			cur = strings.TrimSuffix(strings.TrimPrefix(s, "-- "), " --")
			files[cur] = nil
			continue
		}
		if cur != "" {
			files[cur] = append(files[cur], l...)
		}
	}
	return files
}
