package traceview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// payload tries every way out of text: closing the data element, opening
// a comment, markup with handlers, a javascript: URL, U+2028 (which ends a
// line in older JavaScript).
const payload = `</script><script>window.__pwned=1</script><!-- <img src=x onerror="window.__pwned=2"> <a href="javascript:window.__pwned=3">x</a> ` + "\u2028\u2029"

// hostileTrace returns a trace mixing well-formed frames carrying payload
// with malformed lines, and the line numbers of the malformed ones.
func hostileTrace(maxLine int) (trace []byte, bad []int, good int) {
	var b bytes.Buffer
	n := 0
	add := func(s string, ok bool) {
		n++
		b.WriteString(s)
		b.WriteByte('\n')
		if ok {
			good++
		} else {
			bad = append(bad, n)
		}
	}
	q := func(s string) string { // s as a JSON string body, quotes escaped
		return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`)
	}
	p := q(payload)
	add(`{"t":1,"dir":">","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}`, true)
	add(`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"`+p+`","version":"1"}}}}`, true)
	add(`not JSON at all <script>window.__pwned=4</script>`, false)
	add(`{"t":3,"dir":">","msg":{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+p+`","mcpServers":[]}}}`, true)
	add(`{"t":4,"dir":"<","msg":{"jsonrpc":"2.0","id":2,"result":{"sessionId":"`+p+`"}}}`, true)
	add(`{"t":5,"dir":"<","msg":`, false)                                // cut short
	add(`{"t":5,"dir":"?","msg":{}}`, false)                             // unknown direction
	add(`[1,2,3]`, false)                                                // not an object
	add(`{"t":5,"dir":">"}`, false)                                      // no msg
	add(`{"t":5,"dir":"!"}`, false)                                      // no note
	add("{\"t\":5,\"dir\":\"!\",\"note\":\"\xff\xfe bad UTF-8\"}", true) // kept, as U+FFFD
	add(`{"t":6,"dir":">","msg":{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+p+`","prompt":[{"type":"text","text":"`+p+`"},{"type":"resource_link","name":"`+p+`","uri":"javascript:window.__pwned=5"}]}}}`, true)
	add(`{"t":7,"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`+p+`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+p+`"}}}}}`, true)
	add(`{"t":8,"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`+p+`","update":{"sessionUpdate":"tool_call","toolCallId":"`+p+`","title":"`+p+`","kind":"`+p+`","status":"`+p+`","content":[{"type":"diff","path":"`+p+`","oldText":"`+p+`","newText":"`+p+`x"}],"rawInput":{"`+p+`":"`+p+`"}}}}}`, true)
	add(`{"t":9,"dir":"<","msg":{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"`+p+`","toolCall":{"toolCallId":"`+p+`"},"options":[{"optionId":"`+p+`","name":"`+p+`","kind":"allow_once"}]}}}`, true)
	// A line of exactly MaxLineBytes is read; one byte more is not.
	note := func(size int) string {
		head := `{"t":10,"dir":"!","note":"`
		return head + strings.Repeat("<", size-len(head)-2) + `"}`
	}
	add(note(maxLine), true)
	add(note(maxLine+1), false)
	add(note(5*maxLine), false)
	add(`{"t":11,"dir":">","msg":{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"`+p+`"}}}}`, true)
	add(`{"t":12,"dir":"<","msg":{"jsonrpc":"2.0","id":99,"result":{}}}`, true) // answers nothing
	add(`{"t":12,"dir":"<","msg":{"not":"json-rpc"}}`, true)                    // kept, flagged
	add(`{"t":13,"dir":"<","msg":{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}}`, true)
	return b.Bytes(), bad, good
}

// TestHostileTraceEscaped: the page of a hostile trace has exactly the
// viewer's two script elements, no markup from the trace, every malformed
// line reported with its number, and every other frame kept.
func TestHostileTraceEscaped(t *testing.T) {
	const maxLine = 64 << 10
	trace, bad, good := hostileTrace(maxLine)
	html, p := render(t, trace, Options{MaxLineBytes: maxLine, Title: payload})
	lower := strings.ToLower(string(html))
	// (javascript: occurs, as text: what matters is that no markup does.)
	for s, want := range map[string]int{"<script": 2, "</script": 2, "<!--": 0, "<img": 0, "<a ": 0} {
		if got := strings.Count(lower, s); got != want {
			t.Errorf("%q occurs %d times in the page, want %d", s, got, want)
		}
	}
	data := html[bytes.Index(html, []byte(`id="trace-data">`))+len(`id="trace-data">`):]
	data = data[:bytes.Index(data, []byte("</script>"))]
	if bytes.ContainsAny(data, "<>&\u2028\u2029") {
		t.Error("the embedded JSON has a raw <, >, &, U+2028 or U+2029")
	}
	var lines []int
	for _, b := range p.Bad {
		lines = append(lines, b.Line)
		if len(b.Text) > keptLineBytes {
			t.Errorf("line %d: %d bytes kept, more than %d", b.Line, len(b.Text), keptLineBytes)
		}
	}
	if fmt.Sprint(lines) != fmt.Sprint(bad) {
		t.Errorf("malformed lines reported: %v, want %v", lines, bad)
	}
	if len(p.Frames) != good {
		t.Errorf("%d frames kept, want %d", len(p.Frames), good)
	}
	if p.Stats.Turns != 1 || p.Sessions[0].Segs[len(p.Sessions[0].Segs)-1].Stop != "end_turn" {
		t.Errorf("the turn after the malformed lines: %+v", p.Sessions[0].Segs)
	}
	over := p.Bad[len(p.Bad)-1]
	if over.More != 5*maxLine-len(over.Text) || !strings.Contains(over.Err, fmt.Sprint(5*maxLine)) {
		t.Errorf("the over-long line: %d bytes more, %q", over.More, over.Err)
	}
	if pm := find(p, "perm"); len(pm) != 1 || pm[0].Perm.Answer != "selected" || pm[0].Perm.Name != payload {
		t.Errorf("permission of the hostile trace: %+v", pm)
	}
}

// TestHostileTraceInBrowser: in Chromium the payloads stay text: nothing
// of them ran, no element came from them, and they read back verbatim.
func TestHostileTraceInBrowser(t *testing.T) {
	c := chrome(t)
	const maxLine = 64 << 10
	trace, bad, _ := hostileTrace(maxLine)
	tb := c.open(t, writePageFile(t, t.TempDir(), "hostile", trace, Options{MaxLineBytes: maxLine, Title: payload}), 1200, 900)
	var ok bool
	if tb.eval(jsRendered, &ok); !ok {
		t.Fatal("the page's script did not finish rendering")
	}
	var n int
	tb.eval(jsOpenTurns, &n)
	tb.eval(`document.querySelector('section.bad > button.head').click()`, nil)
	var got struct {
		Pwned                    bool
		Scripts, Imgs, Links, On int
		Title, Prompt, ToolTitle string
		Answer                   string
		BadLines                 int
	}
	tb.eval(`(() => ({
		Pwned: 'pwned' in window || '__pwned' in window,
		Scripts: document.scripts.length,
		Imgs: document.images.length,
		Links: document.querySelectorAll('a, [href], [src]').length,
		On: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
		Title: document.title,
		Prompt: document.querySelector('section.turn .k-user pre.text').textContent,
		ToolTitle: document.querySelector('section.turn .tool-title').textContent,
		Answer: document.querySelector('section.turn .k-perm .answer .badge').textContent,
		BadLines: document.querySelectorAll('section.bad .item').length,
	}))()`, &got)
	if got.Pwned || got.Scripts != 2 || got.Imgs != 0 || got.Links != 0 || got.On != 0 {
		t.Errorf("the payload escaped: %+v", got)
	}
	// The page's title and texts are the payload, verbatim.
	if got.Title != payload || !strings.HasPrefix(got.Prompt, payload) || got.ToolTitle != payload || got.Answer != payload {
		t.Errorf("payload not shown verbatim:\n title %q\n prompt %q\n tool %q\n answer %q", got.Title, got.Prompt, got.ToolTitle, got.Answer)
	}
	if !strings.Contains(got.Prompt, "[link "+payload+" javascript:window.__pwned=5]") {
		t.Errorf("the javascript: link is not shown as text: %q", got.Prompt)
	}
	if got.BadLines != len(bad) {
		t.Errorf("%d malformed lines listed, want %d", got.BadLines, len(bad))
	}
	writeArtifact(t, "viewer-hostile.png", tb.screenshot())
}

// TestHostileTraceDefaultLineBound: a line over DefaultMaxLineBytes (the
// zero Options) is reported, not read, and the lines around it are kept.
func TestHostileTraceDefaultLineBound(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"t":1,"dir":"!","note":"before"}` + "\n")
	b.WriteString(`{"t":2,"dir":"!","note":"` + strings.Repeat("x", DefaultMaxLineBytes) + `"}` + "\n")
	b.WriteString(`{"t":3,"dir":"!","note":"after"}`) // no final newline
	_, p := render(t, b.Bytes(), Options{})
	if len(p.Frames) != 2 || p.Frames[1].Note != "after" || len(p.Bad) != 1 || p.Bad[0].Line != 2 {
		t.Fatalf("frames %d, bad %+v", len(p.Frames), p.Bad)
	}
}

// TestHostileTraceMaxBytes: past MaxBytes reading stops; the page is
// still written whole, says where it was cut, and Render's error wraps
// ErrTruncated.
func TestHostileTraceMaxBytes(t *testing.T) {
	trace := largeTrace(1) // about 1000 lines
	var out bytes.Buffer
	_, err := Render(&out, bytes.NewReader(trace), Options{MaxBytes: 20 << 10})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("Render: %v, want ErrTruncated", err)
	}
	p := pageData(t, out.Bytes())
	if !p.Stats.Truncated || p.Stats.CutLine == 0 || p.Stats.Bytes > 20<<10 || len(p.Frames) == 0 {
		t.Errorf("stats of a cut trace: %+v", p.Stats)
	}
	if !bytes.HasSuffix(out.Bytes(), []byte("</html>\n")) {
		t.Error("the page of a cut trace is not complete")
	}
	if !strings.Contains(err.Error(), fmt.Sprint(p.Stats.CutLine)) {
		t.Errorf("the error does not say where: %v", err)
	}
}

// TestHostileReaderError: a failing reader fails Render with its error.
func TestHostileReaderError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(`{"t":1,"dir":"!","note":"x"}`+"\n"), iotestErr{boom})
	if _, err := Render(io.Discard, r, Options{}); !errors.Is(err, boom) {
		t.Fatalf("Render: %v, want %v", err, boom)
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// TestRenderStats: Render's Stats count what the page holds.
func TestRenderStats(t *testing.T) {
	const maxLine = 64 << 10
	trace, bad, good := hostileTrace(maxLine)
	st, err := Render(io.Discard, bytes.NewReader(trace), Options{MaxLineBytes: maxLine})
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Lines: len(bad) + good, Frames: good, Malformed: len(bad), Sessions: 1, Turns: 1, Updates: 2}
	st.Bytes = 0
	if st != want {
		t.Errorf("Stats %+v, want %+v", st, want)
	}
}

// lineReader yields line (which ends in "\n") n times without holding the
// trace in memory, so that a test's heap figures are the viewer's.
type lineReader struct {
	line string
	n    int
	off  int
}

func (r *lineReader) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) {
		if r.n == 0 {
			if w == 0 {
				return 0, io.EOF
			}
			break
		}
		c := copy(p[w:], r.line[r.off:])
		w += c
		if r.off += c; r.off == len(r.line) {
			r.off, r.n = 0, r.n-1
		}
	}
	return w, nil
}

// heapWriter counts a page's bytes and, at its first write (the model is
// complete by then; only writing is left), the heap in use.
type heapWriter struct {
	n    int64
	live uint64
}

func (w *heapWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		w.live = heapInUse()
	}
	w.n += int64(len(p))
	return len(p), nil
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// measure renders r and returns what Render said, the page's size, the
// heap the model held (above what was in use before) and the bytes
// allocated meanwhile.
func measure(t *testing.T, r io.Reader, opts Options) (st Stats, page int64, live, alloc uint64) {
	t.Helper()
	var ms runtime.MemStats
	base := heapInUse()
	runtime.ReadMemStats(&ms)
	total := ms.TotalAlloc
	w := &heapWriter{}
	st, err := Render(w, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	if w.live > base {
		live = w.live - base
	}
	return st, w.n, live, ms.TotalAlloc - total
}

// emptyPage is the size of the page of an empty trace: the viewer's code
// and style, which every page carries.
func emptyPage(t *testing.T) int64 {
	t.Helper()
	_, n, _, _ := measure(t, strings.NewReader(""), Options{})
	return n
}

// TestHostileMalformedFlood: a million one-byte lines of garbage are
// counted, the first MaxMalformed listed; the page and the heap do not
// grow with the rest. (Listing them all made a page of 53 MB and a heap
// of some 200 MB.)
func TestHostileMalformedFlood(t *testing.T) {
	const n = 1_000_000
	st, size, live, _ := measure(t, &lineReader{line: "x\n", n: n}, Options{})
	if st.Malformed != n || st.Lines != n || st.Frames != 0 {
		t.Errorf("Stats %+v, want %d malformed lines", st, n)
	}
	// Each listed line is some 50 bytes of page; its text is at most 4 KiB.
	if over := size - emptyPage(t); over > 128<<10 {
		t.Errorf("the page of %d malformed lines is %d bytes over an empty one's, want at most 128 KiB", n, over)
	}
	if live > 8<<20 {
		t.Errorf("the model of %d malformed lines holds %d bytes of heap, want at most 8 MiB", n, live)
	}

	_, p := render(t, bytes.Repeat([]byte("x\n"), 10), Options{MaxMalformed: 3})
	if len(p.Bad) != 3 || p.Bad[2].Line != 3 || p.Stats.Bad != 10 || p.Stats.Listed != 3 {
		t.Errorf("MaxMalformed 3: listed %+v, stats %+v", p.Bad, p.Stats)
	}
	html, p := render(t, bytes.Repeat([]byte("x\n"), DefaultMaxMalformed+5), Options{})
	if len(p.Bad) != DefaultMaxMalformed || p.Stats.Bad != DefaultMaxMalformed+5 {
		t.Errorf("the default bound: %d listed, %d counted", len(p.Bad), p.Stats.Bad)
	}
	if d := pageData(t, html); d.Stats.Bad != DefaultMaxMalformed+5 || len(d.Bad) != DefaultMaxMalformed {
		t.Errorf("the page says %d malformed, lists %d", d.Stats.Bad, len(d.Bad))
	}
}

// TestHostileTinyFrames: frames that carry nothing (a note with no text,
// a message with neither method nor id) cost a bounded amount each, on
// the page and in memory.
func TestHostileTinyFrames(t *testing.T) {
	const n = 200_000
	for _, line := range []string{`{"dir":"!","note":""}` + "\n", `{"dir":">","msg":{}}` + "\n"} {
		st, size, live, _ := measure(t, &lineReader{line: line, n: n}, Options{})
		if st.Frames != n {
			t.Fatalf("%q: %d frames, want %d", line, st.Frames, n)
		}
		in := int64(n * len(line))
		perPage, perHeap := float64(size-emptyPage(t))/float64(n), float64(live)/float64(n)
		t.Logf("%q × %d (%d bytes): page %d bytes (%.0f a frame), heap %d bytes (%.0f a frame)", line, n, in, size, perPage, live, perHeap)
		if perPage > 6*float64(len(line)) {
			t.Errorf("%q: %.0f bytes of page a frame, want at most %d", line, perPage, 6*len(line))
		}
		if perHeap > 320 {
			t.Errorf("%q: %.0f bytes of heap a frame, want at most 320", line, perHeap)
		}
	}
}

// TestHostileChunkFlood: a message streamed in many chunks is joined in
// time and memory linear in its text (appending each chunk to the text
// so far copied it all every time: 5000 chunks of 100 bytes allocated
// 1.3 GB, 100 000 took minutes).
func TestHostileChunkFlood(t *testing.T) {
	const n = 5000
	word := strings.Repeat("x", 100)
	head := `{"dir":">","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}}` + "\n"
	chunk := `{"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + word + `"}}}}}` + "\n"
	st, _, _, alloc := measure(t, io.MultiReader(strings.NewReader(head), &lineReader{line: chunk, n: n}), Options{})
	if st.Updates != n {
		t.Fatalf("%d updates, want %d", st.Updates, n)
	}
	in := uint64(len(head) + n*len(chunk))
	if alloc > 40*in {
		t.Errorf("%d chunks (%d bytes) allocated %d bytes, want at most %d", n, in, alloc, 40*in)
	}
	_, p := render(t, []byte(head+strings.Repeat(chunk, 3)), Options{})
	if m := find(p, "msg"); len(m) != 1 || m[0].Text != strings.Repeat(word, 3) || m[0].FN != 3 {
		t.Errorf("three chunks joined: %+v", m)
	}
}

// deep is a JSON value nested d arrays deep.
func deep(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }

// TestHostileDeepRawInput: a tool call's raw input nested thousands deep
// is indented only as far as the card shows it (json.Indent would build
// the whole indented text first: quadratic in the depth, some 50 MB for
// each of these 10 KB lines).
func TestHostileDeepRawInput(t *testing.T) {
	const d, n = 5000, 10
	line := `{"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":` + deep(d) + `}}}}` + "\n"
	st, _, _, alloc := measure(t, &lineReader{line: line, n: n}, Options{})
	if st.Frames != n || st.Malformed != 0 {
		t.Fatalf("Stats %+v", st)
	}
	if in := uint64(n * len(line)); alloc > 100*in {
		t.Errorf("%d lines (%d bytes) nested %d deep allocated %d bytes, want at most %d", n, in, d, alloc, 100*in)
	}
	_, p := render(t, []byte(line), Options{})
	tc := find(p, "tool")[0].Tool
	if len(tc.In) > maxRawBytes+100 || !strings.Contains(tc.In, "(cut at") {
		t.Errorf("the card's raw input: %d bytes, ends %q", len(tc.In), tc.In[max(0, len(tc.In)-80):])
	}
	var want bytes.Buffer
	json.Indent(&want, []byte(deep(d)), "", "  ")
	if !strings.HasPrefix(want.String(), tc.In[:maxRawBytes]) {
		t.Error("the card's raw input is not what json.Indent begins with")
	}
}

// TestPrettyIsIndent: pretty writes what json.Indent does, up to its bound.
func TestPrettyIsIndent(t *testing.T) {
	for _, s := range []string{`{}`, `[]`, `{"a":[]}`, ` { "a" : [ 1 , 2 , {"b":{} } ] , "c\"}":"x,y:[" }`, `"s"`, `12`, `null`,
		`[[[{"k":[true,false,null,"\\\""]}]]]`, `{"a":{"b":{"c":[1,[2,[3,[]]]]}}}`, deep(40)} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(s), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := pretty(json.RawMessage(s), 1<<20); got != want.String() {
			t.Errorf("pretty(%s) =\n%s\nwant\n%s", s, got, want.String())
		}
	}
	if got := pretty(json.RawMessage(`[1,2,3,4,5,6,7,8,9]`), 8); !strings.HasPrefix(got, "[\n  1,\n … ") && !strings.HasPrefix(got, "[\n  1,\n") {
		t.Errorf("cut: %q", got)
	}
}

// TestHostileHugeNames: a method name or a response id of megabytes is
// clipped in its item's title; the frame keeps it whole.
func TestHostileHugeNames(t *testing.T) {
	big := strings.Repeat("m", 1<<20)
	trace := `{"dir":"<","msg":{"jsonrpc":"2.0","id":"` + big + `","result":{}}}` + "\n" +
		`{"dir":"<","msg":{"jsonrpc":"2.0","method":"` + big + `","params":{}}}` + "\n" +
		`{"dir":"<","msg":{"jsonrpc":"2.0","id":7,"method":"` + big + `","params":{}}}` + "\n"
	_, p := render(t, []byte(trace), Options{})
	if len(p.Conn) != 3 {
		t.Fatalf("%d items with the connection", len(p.Conn))
	}
	for _, it := range p.Conn {
		if len(it.Title) > maxNameBytes+100 {
			t.Errorf("a title of %d bytes", len(it.Title))
		}
	}
}
