package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/acpclient/acp/schema"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks in this file measure the session/update hot path: the
// reader goroutine's dispatch, decode and fold of each line. They run only
// with -bench; `go test ./...` does not run them. The side-by-side
// comparison with other SDKs lives in the separate module under bench/.

// benchChunkLine is one agent_message_chunk notification as an agent writes
// it (a typical streamed token or two).
var benchChunkLine = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, this is a streamed token or two of the answer"}}}}`)

// pipeAgent is an in-process agent on the far side of two OS pipes. It
// answers initialize and session/new, and answers each session/prompt by
// writing the turn's pre-rendered bytes and then the response.
type pipeAgent struct {
	in   *os.File // agent reads what the client writes
	out  *os.File // agent writes what the client reads
	turn atomic.Pointer[func(w io.Writer, id json.RawMessage)]
	done chan struct{}
	// client is the client on the other side until stop closes it: the
	// test's cleanup holds the agent, not the client, so a benchmark that
	// stops a round's client does not keep its state alive to the end
	// (and every later collection scanning it).
	client atomic.Pointer[Client]
}

// answer makes the agent answer each prompt with wire: the lines the
// client reads before the prompt's response.
func (a *pipeAgent) answer(wire []byte) {
	f := func(w io.Writer, _ json.RawMessage) { w.Write(wire) }
	a.turn.Store(&f)
}

// stop closes the client and waits for the agent to end; a second stop
// does nothing.
func (a *pipeAgent) stop() {
	if c := a.client.Swap(nil); c != nil {
		c.Close()
		<-a.done
	}
}

func startPipeAgent(tb testing.TB) (*Client, *Session, *pipeAgent) {
	tb.Helper()
	return startPipeAgentOpts(tb, nil)
}

func startPipeAgentOpts(tb testing.TB, opts *ClientOptions) (*Client, *Session, *pipeAgent) {
	tb.Helper()
	cr, aw, err := os.Pipe() // agent → client
	if err != nil {
		tb.Fatal(err)
	}
	ar, cw, err := os.Pipe() // client → agent
	if err != nil {
		tb.Fatal(err)
	}
	a := &pipeAgent{in: ar, out: aw, done: make(chan struct{})}
	go a.run()
	c, err := Connect(context.Background(), &StreamTransport{Reader: cr, Writer: cw}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		tb.Fatal(err)
	}
	a.client.Store(c)
	tb.Cleanup(a.stop)
	return c, s, a
}

func (a *pipeAgent) run() {
	defer close(a.done)
	defer a.out.Close()
	defer a.in.Close()
	in := bufio.NewReaderSize(a.in, 64<<10)
	bw := bufio.NewWriterSize(a.out, 256<<10)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		bw.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			if bytes.Contains(line, []byte(`"protocolVersion":2`)) {
				reply(m.ID, `{"protocolVersion":2,"info":{"name":"pipe","version":"1"},"capabilities":{"session":{}}}`)
			} else {
				reply(m.ID, `{"protocolVersion":1}`)
			}
		case "session/new":
			reply(m.ID, `{"sessionId":"s1"}`)
		case "_test/sync":
			// An answer the client reads only after every line before it:
			// a test that calls it knows the reader has moved past them.
			reply(m.ID, `{}`)
		case "session/prompt":
			if f := a.turn.Load(); f != nil {
				(*f)(bw, m.ID)
				reply(m.ID, `{"stopReason":"end_turn"}`)
			}
		}
	}
}

// promptResponseLine renders the agent's answer to a prompt.
func promptResponseLine(t *Turn) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + t.RequestID() + `,"result":{"stopReason":"end_turn"}}`)
}

// BenchmarkDecodeFoldChunk measures one agent_message_chunk line through the
// reader's path: wire dispatch (envelope) → decode → Session.apply (fold into
// the running turn). Turns are rotated every 64k updates so the retained
// update log does not grow without bound.
func BenchmarkDecodeFoldChunk(b *testing.B) {
	var c *Client
	var t *Turn
	var a *pipeAgent
	// Each round runs on a fresh connection: a session keeps all its turns,
	// and a heap that grows with b.N would make the GC's share grow too.
	newRound := func() {
		if c != nil {
			// The reader ends the turn; the frame it returns is for jrpc2,
			// which this benchmark bypasses (Close fails the call).
			c.conn.Load().wire.Dispatch(promptResponseLine(t))
			if _, err := t.Wait(); err != nil {
				b.Fatal(err)
			}
			a.stop()
		}
		var s *Session
		c, s, a = startPipeAgent(b)
		var err error
		if t, err = s.Prompt(context.Background(), schema.Text("go")); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
	}
	newRound()
	line := bytes.Clone(benchChunkLine)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	const round = 64 << 10
	n := 0
	for b.Loop() {
		if out := c.conn.Load().wire.Dispatch(line); out != nil {
			b.Fatalf("a session/update went to jrpc2: %s", out)
		}
		if n++; n%round == 0 {
			b.StopTimer()
			newRound()
			b.StartTimer()
		}
	}
	b.StopTimer()
	if _, got := t.Snapshot(); got != uint64(n%round) {
		b.Fatalf("the turn folded %d updates, want %d", got, n%round)
	}
}

// renderChunks renders n agent_message_chunk lines whose texts are
// "<i>," padded to pad bytes.
func renderChunks(n, pad int) []byte {
	var buf bytes.Buffer
	text := make([]byte, 0, pad+16)
	for i := range n {
		text = strconv.AppendInt(text[:0], int64(i), 10)
		text = append(text, ',')
		for len(text) < pad {
			text = append(text, '.')
		}
		buf.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
		buf.Write(text)
		buf.WriteString("\"}}}}\n")
	}
	return buf.Bytes()
}

// BenchmarkTurn100kChunks runs whole turns of 100 000 chunks end to end: an
// agent goroutine writes the pre-rendered lines into an OS pipe, the client
// reads and folds them, Wait returns after the prompt response.
func BenchmarkTurn100kChunks(b *testing.B) {
	const n = 100_000
	wireBytes := renderChunks(n, 24)
	_, s, a := startPipeAgent(b)
	a.answer(wireBytes)
	var ms0, ms1 runtime.MemStats
	b.SetBytes(int64(len(wireBytes)))
	b.ReportAllocs()
	runtime.ReadMemStats(&ms0)
	var elapsed time.Duration
	turns := 0
	for b.Loop() {
		start := time.Now()
		t, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Wait(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		turns++
		if _, got := t.Snapshot(); got != n+1 { // and the end
			b.Fatalf("folded %d events, want %d", got, n+1)
		}
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n*turns), "allocs/update")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n*turns), "B/update")
}

// heapSampler records the high-water mark of live heap objects.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			h.sample()
			select {
			case <-h.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	v := heapObjects()
	for {
		p := h.peak.Load()
		if v <= p || h.peak.CompareAndSwap(p, v) {
			return
		}
	}
}

func (h *heapSampler) end() uint64 {
	close(h.stop)
	h.wg.Wait()
	h.sample()
	return h.peak.Load()
}

// BenchmarkStream100MB streams one 100 MB message in 100 000 chunks of 1000
// bytes and reports the peak heap (live objects, sampled every millisecond,
// above the heap before the turn) as a ratio to the text size, after a
// snapshot of the assembled message was taken. The agent renders each line
// on the fly into a small buffer, so the heap is the client's alone.
func BenchmarkStream100MB(b *testing.B) {
	const n, size = 100_000, 1000
	_, s, a := startPipeAgent(b)
	f := func(w io.Writer, _ json.RawMessage) {
		var line []byte
		for i := range n {
			line = append(line[:0], `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`...)
			start := len(line)
			line = strconv.AppendInt(line, int64(i), 10)
			line = append(line, ',')
			for len(line)-start < size {
				line = append(line, 'x')
			}
			line = append(line, "\"}}}}\n"...)
			w.Write(line)
		}
	}
	a.turn.Store(&f)
	b.ReportAllocs()
	b.SetBytes(n * size)
	var ratio float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		base := heapObjects()
		h := startHeapSampler(time.Millisecond)
		b.StartTimer()
		t, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Wait(); err != nil {
			b.Fatal(err)
		}
		st := t.State()
		peak := h.end()
		if got := len(st.Messages[0].Text); got != n*size {
			b.Fatalf("message is %d bytes, want %d", got, n*size)
		}
		r := float64(peak-min(peak, base)) / float64(n*size)
		ratio = max(ratio, r)
		runtime.KeepAlive(st)
	}
	b.ReportMetric(ratio, "peak-heap/text")
}

// BenchmarkFoldDistinctMessageIDs folds agent_message_chunks that each
// start a new message (a hostile agent's pattern): the cost per chunk must
// not grow with the number of messages.
func BenchmarkFoldDistinctMessageIDs(b *testing.B) {
	var f fold
	ids := make([]string, 1<<20)
	for i := range ids {
		ids[i] = "m" + strconv.Itoa(i)
	}
	text := schema.Text("x")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(ids) {
			f, i = fold{}, 0
		}
		f.apply(&schema.AgentMessageChunk{MessageID: ids[i], Content: text})
		i++
	}
	b.ReportMetric(float64(f.visits)/float64(i), "visits/op")
}

// BenchmarkSessionRetention runs a 500-turn session of 2 000 chunks a turn
// (64 bytes of text each) and reports the live heap it retains after GC,
// per byte of text the agent sent: with the default options (the folded
// text of every turn, the log of the last) and when the caller releases
// each turn. Run it with -benchtime=1x.
func BenchmarkSessionRetention(b *testing.B) {
	for _, release := range []bool{false, true} {
		name := "default"
		if release {
			name = "released"
		}
		b.Run(name, func(b *testing.B) {
			var heap, text uint64
			for b.Loop() {
				heap, text = retainedHeap(b, nil, 500, 2000, 64, release)
			}
			b.ReportMetric(float64(heap), "retained-B")
			b.ReportMetric(float64(heap)/float64(text), "retained/text")
		})
	}
}

// renderToolTurn renders n updates of a tool-heavy turn: every tenth a new
// tool_call, the others a tool_call_update of the latest with new content.
func renderToolTurn(n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		id := "t" + strconv.Itoa(i/10)
		buf.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`)
		if i%10 == 0 {
			fmt.Fprintf(&buf, `{"sessionUpdate":"tool_call","toolCallId":%q,"title":"Run step %d","kind":"execute","status":"pending"}`, id, i)
		} else {
			fmt.Fprintf(&buf, `{"sessionUpdate":"tool_call_update","toolCallId":%q,"status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"progress %d"}}]}`, id, i)
		}
		buf.WriteString("}}\n")
	}
	return buf.Bytes()
}

// uiLoops are ways a UI follows a turn, each "rendering" every tool-call
// change (reading the card's fields).
var uiLoops = map[string]func(t *Turn) int{
	// baseline: the updates alone, no tool call state at all.
	"updates": func(t *Turn) int {
		n := 0
		for range t.Updates() {
			n++
		}
		return n
	},
	// feed: each event carries the tool call as merged.
	"events": func(t *Turn) int {
		n := 0
		for ev := range t.Events(context.Background(), 0) {
			if tc := ev.ToolCall; tc != nil {
				n += len(tc.Title) + len(tc.Status) + len(tc.Content)
			}
		}
		return n
	},
	// snapshot: what a UI had to do before — a State per update.
	"snapshot": func(t *Turn) int {
		n := 0
		for u := range t.Updates() {
			var id string
			switch u := u.(type) {
			case *schema.ToolCall:
				id = u.ToolCallID
			case *schema.ToolCallUpdate:
				id = u.ToolCallID
			}
			for _, tc := range t.State().ToolCalls {
				if tc.ToolCallID == id {
					n += len(tc.Title) + len(tc.Status) + len(tc.Content)
				}
			}
		}
		return n
	},
}

// uiLoopAlloc runs one turn of n tool updates with loop following it and
// returns the bytes allocated meanwhile, by the client and the loop.
func uiLoopAlloc(tb testing.TB, n int, loop func(*Turn) int) uint64 {
	tb.Helper()
	_, s, a := startPipeAgent(tb)
	wire := renderToolTurn(n)
	a.answer(wire)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	t, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		tb.Fatal(err)
	}
	loop(t)
	if _, err := t.Wait(); err != nil {
		tb.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	return ms1.TotalAlloc - ms0.TotalAlloc
}

// BenchmarkUILoop20k follows a 20 000-update tool-heavy turn the three ways
// of uiLoops and reports the bytes allocated per turn.
func BenchmarkUILoop20k(b *testing.B) {
	for _, name := range []string{"updates", "events", "snapshot"} {
		b.Run(name, func(b *testing.B) {
			var total uint64
			turns := 0
			for b.Loop() {
				total += uiLoopAlloc(b, 20_000, uiLoops[name])
				turns++
			}
			b.ReportMetric(float64(total)/float64(turns), "B/turn")
		})
	}
}
