package traceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// transcripts are every recording in the module's testdata: v1 and v2,
// real agents and the TypeScript SDK's.
func transcripts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"../testdata/transcripts/*.jsonl", "../testdata/transcripts/v2/*.jsonl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 50 {
		t.Fatalf("found only %d transcripts", len(out))
	}
	return out
}

// pageData decodes the JSON a page embeds.
func pageData(t *testing.T, html []byte) *page {
	t.Helper()
	const open = `<script type="application/json" id="trace-data">`
	i := bytes.Index(html, []byte(open))
	if i < 0 {
		t.Fatal("no trace-data element in the page")
	}
	rest := html[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		t.Fatal("the trace-data element is not closed")
	}
	var p struct {
		page
		Frames []rawFrame `json:"frames"`
	}
	if err := json.Unmarshal(rest[:j], &p); err != nil {
		t.Fatal(err)
	}
	p.page.Frames = p.Frames
	return &p.page
}

// render renders trace as Render does and returns the page and the model
// it embeds (not decoded back from the page: for a large trace that
// would cost more than the rendering; the browser tests read the page).
func render(t *testing.T, trace []byte, opts Options) ([]byte, *page) {
	t.Helper()
	opts = opts.withDefaults()
	p, _, err := load(bytes.NewReader(trace), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writePage(&out, p, opts); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), p
}

// prompts counts the session/prompt requests of a trace: each is a turn.
func prompts(trace []byte) int {
	return bytes.Count(trace, []byte(`"method":"session/prompt"`))
}

// TestRenderTranscripts renders every recording: no error, no line
// reported malformed, every frame kept, one turn per prompt, each ended
// as the wire says.
func TestRenderTranscripts(t *testing.T) {
	for _, path := range transcripts(t) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			trace, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			html, p := render(t, trace, Options{})
			if d := pageData(t, html); len(d.Frames) != len(p.Frames) || len(d.Sessions) != len(p.Sessions) {
				t.Errorf("the page embeds %d frames, %d sessions; the model has %d, %d", len(d.Frames), len(d.Sessions), len(p.Frames), len(p.Sessions))
			} else {
				for i, f := range d.Frames {
					w := p.Frames[i]
					if f.Line != w.Line || f.Dir != w.Dir || f.Note != w.Note || !sameJSON(f.Msg, w.Msg) || (f.T == nil) != (w.T == nil) || f.T != nil && *f.T != *w.T {
						t.Fatalf("embedded frame %d differs:\n%+v\n%+v", i, f, w)
					}
				}
			}
			if len(p.Bad) != 0 {
				t.Errorf("lines reported malformed: %+v", p.Bad)
			}
			if want := bytes.Count(bytes.TrimSpace(trace), []byte("\n")) + 1; p.Stats.Frames != want || len(p.Frames) != want {
				t.Errorf("frames: %d (%d embedded), want %d", p.Stats.Frames, len(p.Frames), want)
			}
			if got, want := p.Stats.Turns, prompts(trace); got != want {
				t.Errorf("turns: %d, want %d (one per session/prompt)", got, want)
			}
			if !p.Stats.Timestamps {
				t.Error("the recordings have timestamps; the page says none")
			}
			for _, s := range p.Sessions {
				for _, g := range s.Segs {
					if g.Kind == "turn" && len(g.Items) == 0 {
						t.Errorf("session %s turn %d has no items (its prompt at least)", s.ID, g.N)
					}
				}
			}
		})
	}
}

// find returns the items of kind k in every turn of the page.
func find(p *page, k string) []*item {
	var out []*item
	for _, s := range p.Sessions {
		for _, g := range s.Segs {
			for _, it := range g.Items {
				if it.K == k {
					out = append(out, it)
				}
			}
		}
	}
	return out
}

// TestRenderEdit checks what the page says about a real recording (Claude
// editing a file after a permission request): the tool call's title,
// status changes and diff, and the permission's answer and its time.
func TestRenderEdit(t *testing.T) {
	trace, err := os.ReadFile("../testdata/transcripts/e2e-claude-edit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, p := render(t, trace, Options{})
	if len(p.Sessions) != 1 || p.Stats.Turns != 1 {
		t.Fatalf("%d sessions, %d turns; want 1, 1", len(p.Sessions), p.Stats.Turns)
	}
	turn := p.Sessions[0].Segs[len(p.Sessions[0].Segs)-1]
	if turn.Stop != "end_turn" || turn.Prompt == "" {
		t.Errorf("turn: stop %q prompt %q", turn.Stop, turn.Prompt)
	}
	var diff *content
	for _, it := range find(p, "tool") {
		for i, c := range it.Tool.Content {
			if c.Type == "diff" && len(c.Diff) > 0 {
				diff = &it.Tool.Content[i]
			}
		}
	}
	if diff == nil {
		t.Fatal("no rendered diff in any tool call")
	}
	joined := strings.Join(diff.Diff, "\n")
	if !strings.Contains(joined, "-hello world") || !strings.Contains(joined, "+hello there") {
		t.Errorf("diff of greet.txt:\n%s", joined)
	}
	perms := find(p, "perm")
	if len(perms) != 1 {
		t.Fatalf("%d permission items, want 1", len(perms))
	}
	pm := perms[0].Perm
	if pm.Answer != "selected" || pm.Option == "" || pm.Name == "" || pm.MS == nil || *pm.MS < 0 {
		t.Errorf("permission: %+v", pm)
	}
	var card *tool
	for _, it := range find(p, "tool") {
		if it.Tool.ID == pm.Tool {
			card = it.Tool
		}
	}
	if card == nil || card.Perm == "" || len(card.Hist) < 2 || card.Title == "" {
		t.Errorf("the permission's tool card: %+v", card)
	}
}

// TestRenderV2 checks a v2 recording: a turn ends on state_update idle
// (not on the prompt's response), whole messages are upserts by id.
func TestRenderV2(t *testing.T) {
	trace, err := os.ReadFile("../testdata/transcripts/v2/tsagent-v2-permission.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, p := render(t, trace, Options{})
	if p.Stats.Proto != 2 {
		t.Errorf("protocol %d, want 2", p.Stats.Proto)
	}
	var turns []*segment
	for _, g := range p.Sessions[0].Segs {
		if g.Kind == "turn" {
			turns = append(turns, g)
		}
	}
	if len(turns) == 0 || !turns[0].Ended || turns[0].Stop == "" {
		t.Fatalf("first v2 turn: %+v", turns)
	}
	perms := find(p, "perm")
	if len(perms) == 0 || perms[0].Perm.Answer != "selected" || perms[0].Perm.Name != "Allow once" || perms[0].Title == "" {
		t.Errorf("v2 permission: %+v", perms[0].Perm)
	}
}

// TestRenderNoTimestamps: a trace without "t" renders, and the page data
// says so (the page then shows no times, and says why).
func TestRenderNoTimestamps(t *testing.T) {
	trace, err := os.ReadFile("../testdata/transcripts/e2e-claude-edit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`"t":[0-9.]+,`).ReplaceAll(trace, nil)
	_, p := render(t, stripped, Options{})
	if p.Stats.Timestamps {
		t.Error("timestamps reported in a trace without any")
	}
	pm := find(p, "perm")[0].Perm
	if pm.Answer != "selected" || pm.MS != nil {
		t.Errorf("permission without timestamps: %+v (want an answer and no time)", pm)
	}
}

// TestRenderDiffBound: a diff of old and new text up to MaxDiffBytes is
// computed; a larger one shows its path and sizes instead.
func TestRenderDiffBound(t *testing.T) {
	edit := func(oldText, newText string) string {
		return `{"t":1,"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"Edit","content":[{"type":"diff","path":"/f","oldText":"` + oldText + `","newText":"` + newText + `"}]}}}}`
	}
	for _, tc := range []struct {
		size   int
		diffed bool
	}{{100, true}, {101, false}} {
		old := strings.Repeat("a", 50)
		trace := edit(old, strings.Repeat("b", tc.size-50))
		_, p := render(t, []byte(trace), Options{MaxDiffBytes: 100})
		c := find(p, "tool")[0].Tool.Content[0]
		if got := len(c.Diff) > 0; got != tc.diffed || (!got && !strings.Contains(c.Note, "over MaxDiffBytes")) {
			t.Errorf("%d bytes: diff %q, note %q", tc.size, c.Diff, c.Note)
		}
	}
}

// sameJSON reports whether a and b are the same JSON value (the page
// escapes <, > and & in strings, so the bytes differ).
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestRenderNotes: TraceWriter's notes are titled by what they are.
func TestRenderNotes(t *testing.T) {
	trace := `{"t":1,"dir":"!","note":"stderr: warming up"}
{"t":2,"dir":"!","note":"stdout (not JSON): hello"}
{"t":3,"dir":"!","note":"agent exited code=0"}
`
	_, p := render(t, []byte(trace), Options{})
	var got []string
	for _, it := range p.Conn {
		got = append(got, it.Title+": "+it.Text)
	}
	want := []string{"agent stderr: warming up", "agent wrote a line that is not JSON: hello", "note: agent exited code=0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notes %q, want %q", got, want)
	}
}

// TestMalformedReasons: a malformed line's reason is said in the trace's
// terms.
func TestMalformedReasons(t *testing.T) {
	for line, want := range map[string]string{
		`[1,2,3]`:                `not a JSON object`,
		`{"t":"soon","dir":"<"}`: `"t" is a JSON string, of the wrong type`,
		`{"dir":"<","msg":[]}`:   `"dir":"<" without a "msg" object`,
		`{"t":1}`:                `no "dir"`,
		`{"t":1,`:                `not a JSON object: unexpected end of JSON input`,
	} {
		_, p := render(t, []byte(line), Options{})
		if len(p.Bad) != 1 || p.Bad[0].Err != want {
			t.Errorf("%s: %+v, want %q", line, p.Bad, want)
		}
	}
}
