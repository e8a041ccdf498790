package traceview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// large is the page of largeTrace(100), rendered once for the package's
// tests (under -race a render of 100 000 updates takes seconds).
var large struct {
	once sync.Once
	html []byte
	p    *page
}

func largePage(t *testing.T) ([]byte, *page) {
	large.once.Do(func() { large.html, large.p = render(t, largeTrace(100), Options{}) })
	return large.html, large.p
}

// largeTrace is a v1 trace of one session with turns × 1000 updates:
// per block of ten, a thought chunk, six message chunks and a tool call
// with two status updates, so each turn has 300 items.
func largeTrace(turns int) []byte {
	var b bytes.Buffer
	t := 0.0
	line := func(dir, msg string) {
		t += 0.5
		fmt.Fprintf(&b, `{"t":%.1f,"dir":%q,"msg":%s}`+"\n", t, dir, msg)
	}
	upd := func(u string) {
		line("<", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"big","update":`+u+`}}`)
	}
	line(">", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	line("<", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"big","version":"1"}}}`)
	line(">", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	line("<", `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"big"}}`)
	for n := 1; n <= turns; n++ {
		id := 2 + n
		line(">", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"big","prompt":[{"type":"text","text":"prompt %d"}]}}`, id, n))
		for k := 0; k < 100; k++ {
			upd(fmt.Sprintf(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"thinking %d.%d "}}`, n, k))
			for c := 0; c < 6; c++ {
				upd(fmt.Sprintf(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"word%d "}}`, c))
			}
			tc := fmt.Sprintf("t%d-%d", n, k)
			upd(fmt.Sprintf(`{"sessionUpdate":"tool_call","toolCallId":%q,"title":"Tool %d.%d","kind":"read","status":"pending"}`, tc, n, k))
			upd(fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":%q,"status":"in_progress"}`, tc))
			upd(fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":%q,"status":"completed","content":[{"type":"content","content":{"type":"text","text":"done"}}]}`, tc))
		}
		line("<", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, id))
	}
	return b.Bytes()
}

// TestLargeTraceModel: 100 000 updates fold into 100 turns of 300 items,
// nothing lost.
func TestLargeTraceModel(t *testing.T) {
	_, p := largePage(t)
	if p.Stats.Updates != 100_000 || p.Stats.Turns != 100 || len(p.Bad) != 0 {
		t.Fatalf("updates %d, turns %d, bad %d", p.Stats.Updates, p.Stats.Turns, len(p.Bad))
	}
	for _, g := range p.Sessions[0].Segs {
		if g.Kind == "turn" && len(g.Items) != 301 { // the prompt, then 300
			t.Fatalf("turn %d has %d items, want 301", g.N, len(g.Items))
		}
	}
}

// TestBrowserLargeTrace loads the page of 100 000 updates in Chromium.
// Responsiveness is proven by what the page builds, not by a clock: at
// load it has turn headers and the last turn's first page of items (200),
// a bounded number of elements; opening a turn renders that turn's first
// page, "show more" the rest, and the other 98 turns stay unrendered.
func TestBrowserLargeTrace(t *testing.T) {
	c := chrome(t)
	html, _ := largePage(t)
	path := filepath.Join(t.TempDir(), "large.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	tb := c.open(t, url, 1200, 900)
	var ok bool
	if tb.eval(jsRendered, &ok); !ok {
		t.Fatal("the page's script did not finish rendering")
	}
	var atLoad, items, last int
	tb.eval(jsNodes, &atLoad)
	tb.eval(`document.querySelectorAll('.item').length`, &items)
	tb.eval(`document.querySelectorAll('section.turn[data-turn="100"].open > .body .item').length`, &last)
	t.Logf("elements at load: %d", atLoad)
	if atLoad > 3000 || items != 200 || last != 200 {
		t.Fatalf("at load the page has %d elements and %d items (%d in turn 100); want at most 3000 and 200, all of turn 100 (100 turn headers, the last turn's first page)", atLoad, items, last)
	}
	var opened struct {
		Items, Tools int
		First, More  string
	}
	tb.eval(`(() => {
		const s = document.querySelector('section.turn[data-turn="57"]');
		s.querySelector(':scope > button.head').click();
		const body = s.querySelector(':scope > .body');
		return {
			Items: body.querySelectorAll('.item').length,
			Tools: body.querySelectorAll('.tool-title').length,
			First: body.querySelector('.item pre.text').textContent,
			More: (body.querySelector(':scope > button.more') || {}).textContent || '',
		};
	})()`, &opened)
	if opened.Items != 200 || opened.First != "prompt 57" || opened.Tools == 0 || opened.More == "" {
		t.Fatalf("turn 57 opened: %+v; want its first 200 items, its prompt first, a show-more button", opened)
	}
	var all, rendered int
	tb.eval(`(() => {
		const body = document.querySelector('section.turn[data-turn="57"] > .body');
		body.querySelector(':scope > button.more').click();
		return body.querySelectorAll('.item').length;
	})()`, &all)
	tb.eval(`document.querySelectorAll('.item').length`, &rendered)
	if all != 301 || rendered != 501 {
		t.Errorf("after show more: %d items in turn 57, %d in the page; want 301, 501 (with turn 100's 200)", all, rendered)
	}
	var after int
	tb.eval(jsNodes, &after)
	t.Logf("elements with turn 57 open: %d", after)
	writeArtifact(t, "viewer-large.png", tb.screenshot())
}

// BenchmarkRenderLarge renders the 100 000-update trace; it reports the
// trace's and the page's size.
//
//	go test -run '^$' -bench RenderLarge -benchtime 3x ./traceview
func BenchmarkRenderLarge(b *testing.B) {
	trace := largeTrace(100)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if _, err := Render(&out, bytes.NewReader(trace), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(trace))/(1<<20), "trace-MiB")
	b.ReportMetric(float64(out.Len())/(1<<20), "page-MiB")
}
