package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

// linesOf is what agentLines must return for data: its lines without
// their newlines, a last one without a newline included.
func linesOf(data string) []string {
	out := strings.Split(data, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Whatever the reads' sizes, the lines come as written, long ones
// (several blocks) and blank ones included.
func TestAgentLinesAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i := range 400 {
		n := rng.IntN(300)
		switch i % 50 {
		case 7:
			n = 3*agentBlock + 5 // longer than a block
		case 8:
			n = 0
		}
		for range n {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		b.WriteByte('\n')
	}
	b.WriteString(`{"last":"no newline"}`)
	data := b.String()
	want := linesOf(data)
	readers := map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(data) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(data)) },
		"half":    func() io.Reader { return iotest.HalfReader(strings.NewReader(data)) },
		"dataerr": func() io.Reader { return iotest.DataErrReader(strings.NewReader(data)) },
	}
	for name, r := range readers {
		a := newAgentLines(r(), 1<<20)
		var got []string
		for {
			line, err := a.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: line %d: %v", name, len(got), err)
			}
			got = append(got, string(line)) // lent: copied before the next read
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d lines, want %d, or a line not as written", name, len(got), len(want))
		}
	}
}

// noRead fails the test if it is read: ready promised a line without one.
type noRead struct {
	t       *testing.T
	r       io.Reader
	blocked bool
}

func (n *noRead) Read(p []byte) (int, error) {
	if n.blocked {
		n.t.Fatal("next read the agent after ready reported a whole line")
	}
	return n.r.Read(p)
}

// ready reports a line only when next returns it without reading (the
// gateway calls next under its lock on that promise), and not a line past
// the bound, which next must read on to refuse.
func TestAgentLinesReady(t *testing.T) {
	r := &noRead{t: t, r: strings.NewReader("one\ntwo\nthree")}
	a := newAgentLines(r, 8)
	if a.ready() {
		t.Fatal("ready before anything was read")
	}
	if l, err := a.next(); err != nil || string(l) != "one" {
		t.Fatalf("first line %q, %v", l, err)
	}
	r.blocked = true
	if !a.ready() {
		t.Fatal("the second line is read but not ready")
	}
	if l, err := a.next(); err != nil || string(l) != "two" {
		t.Fatalf("second line %q, %v", l, err)
	}
	if a.ready() {
		t.Fatal("ready with only a partial line read")
	}
	r.blocked = false
	if l, err := a.next(); err != nil || string(l) != "three" {
		t.Fatalf("last line %q, %v", l, err)
	}
	if _, err := a.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last line: %v, want io.EOF", err)
	}

	long := newAgentLines(strings.NewReader("ok\n0123456789\n"), 8)
	if _, err := long.next(); err != nil {
		t.Fatal(err)
	}
	if long.ready() {
		t.Error("ready reports a line over the bound")
	}
	if _, err := long.next(); !errors.Is(err, errLineTooLong) {
		t.Errorf("a line over the bound: %v, want errLineTooLong", err)
	}
}

// endless is an agent that writes one line forever, counting what it
// was read.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

// A line without end is refused once it passes the bound, having read
// (and so held) little more than the bound; a line at the bound is read,
// and the block goes back to agentBlock after it, however the reads fall
// (a read that ends the long line and starts the next included).
func TestAgentLinesBound(t *testing.T) {
	const max = 100 << 10
	e := &endless{}
	a := newAgentLines(e, max)
	if _, err := a.next(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("an endless line: %v, want errLineTooLong", err)
	}
	if e.n > max+agentBlock || len(a.buf) > max+1 {
		t.Errorf("read %d bytes into a block of %d for a bound of %d", e.n, len(a.buf), max)
	}
	exact := strings.Repeat("y", max) + "\n"
	// A long line that leaves room in its block: the reads after it go
	// into a fresh block, not that room.
	long := strings.Repeat("w", max-20000) + "\n"
	short := strings.Repeat("z\n", 5000)
	for name, r := range map[string]func() io.Reader{
		"half": func() io.Reader { return iotest.HalfReader(strings.NewReader(exact + short + long + short)) },
		// 1000-byte reads: the one that ends a long line brings the
		// start of the short ones with it.
		"1000": func() io.Reader { return &chunked{data: exact + short + long + short, n: 1000} },
	} {
		a = newAgentLines(r(), max)
		if l, err := a.next(); err != nil || len(l) != max {
			t.Fatalf("%s: a line at the bound: %d bytes, %v", name, len(l), err)
		}
		for round := range 2 {
			for i := range 5000 {
				if l, err := a.next(); err != nil || string(l) != "z" {
					t.Fatalf("%s: line %d after long line %d: %q, %v", name, i, round, l, err)
				}
				// 2000 bytes on, the long line's block is gone.
				if i == 1000 && len(a.buf) > agentBlock {
					t.Errorf("%s: %d bytes held for the reads after long line %d, want at most %d", name, len(a.buf), round, agentBlock)
				}
				// ... and the block is a pooled one again, which
				// handOver may give a stream: pooled is the block.
				if i == 1000 && (a.pooled == nil || !within(a.buf, a.pooled)) {
					t.Errorf("%s: the block after long line %d is not the pooled one", name, round)
				}
			}
			if round == 0 {
				if l, err := a.next(); err != nil || len(l) != max-20000 {
					t.Fatalf("%s: the second long line: %d bytes, %v", name, len(l), err)
				}
			}
		}
	}
}

// chunked reads data n bytes at a time.
type chunked struct {
	data string
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// A reader that returns nothing, and no error, again and again is
// reported as io.ErrNoProgress rather than read forever.
func TestAgentLinesNoProgress(t *testing.T) {
	a := newAgentLines(readerFunc(func([]byte) (int, error) { return 0, nil }), 1<<10)
	if _, err := a.next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("got %v, want io.ErrNoProgress", err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// A line reaches the client without the spaces, tabs and CRs that end
// it, and a line of nothing else is blank (nil) and skipped.
func TestNextLineTrimsItsEnd(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		" \t\r":          "",
		`{"a":1}`:        `{"a":1}`,
		"{\"a\":1} \r":   `{"a":1}`,
		"{\"a\":1}\t \t": `{"a":1}`,
		" {\"a\":1}":     ` {"a":1}`,
	} {
		got, err := nextLine(newAgentLines(strings.NewReader(in+"\n"), 1<<10), true)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !bytes.Equal(got, []byte(want)) || (want == "") != (got == nil) {
			t.Errorf("nextLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// A CR between a line's JSON tokens would end an SSE event's line: for
// an SSE stream the line is compacted; a WebSocket frame carries it as it
// is (JSON's whitespace), with no scan for it.
func TestNextLineCR(t *testing.T) {
	in := "{\"a\":\r1,\r\"b\":2}"
	for sse, want := range map[bool]string{true: `{"a":1,"b":2}`, false: in} {
		got, err := nextLine(newAgentLines(strings.NewReader(in+"\n"), 1<<10), sse)
		if err != nil || string(got) != want {
			t.Errorf("sse %v: %q, %v; want %q", sse, got, err, want)
		}
	}
}

// The updates route takes with the first, already read behind it, stop
// at MaxBufferedBytes as one line at a time would (one message may
// overshoot), and a line that is not such an update is handed back to be
// routed next: the queue holds the agent's lines in their order.
func TestRouteBurst(t *testing.T) {
	update := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %03d"}}}}`, i)
	}
	for _, ws := range []bool{true, false} {
		// Ten blocks' worth, so that an HTTP connection's block is read
		// into again under lines it lent.
		var in []string
		for i := range 1000 {
			in = append(in, update(i))
		}
		const answer = `{"jsonrpc":"2.0","id":7,"result":{}}`
		in = slices.Insert(in, 5, answer, "")
		size := len(update(0))
		c := &conn{
			ws:      ws,
			o:       &Options{MaxBufferedBytes: 10 * size, MaxSessions: 4},
			streams: map[string]*stream{"": newStream()},
			pending: map[string]string{},
		}
		lines := newAgentLines(strings.NewReader(strings.Join(in, "\n")+"\n"), 1<<20)
		// The queued lines are kept as queued, and read only at the end.
		var queued [][]byte
		take := func() {
			for _, st := range c.streams {
				queued = append(queued, st.queue...)
				st.queue = nil
			}
			c.buffered = 0
		}
		line, err := nextLine(lines, !c.ws)
		if err != nil {
			t.Fatal(err)
		}
		// The first burst ends at the answer, which comes back.
		line = c.route(line, lines)
		if string(line) != answer || c.buffered != 5*size {
			t.Fatalf("ws=%v: the first burst queued %d bytes and handed back %q, want %d and the answer", ws, c.buffered, line, 5*size)
		}
		take()
		if line = c.route(line, lines); line != nil {
			t.Fatalf("ws=%v: the answer's route handed back %q", ws, line)
		}
		take()
		// The rest: each burst stops at the bound.
		for {
			if line == nil {
				if line, err = nextLine(lines, !c.ws); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if line == nil {
					continue // blank
				}
			}
			line = c.route(line, lines)
			if c.buffered > 10*size+size {
				t.Fatalf("ws=%v: a burst queued %d bytes, over the bound of %d and one message", ws, c.buffered, 10*size)
			}
			take()
		}
		want := slices.DeleteFunc(slices.Clone(in), func(s string) bool { return s == "" })
		if len(queued) != len(want) {
			t.Fatalf("ws=%v: queued %d lines, want %d", ws, len(queued), len(want))
		}
		for i := range want {
			if string(queued[i]) != want[i] {
				t.Fatalf("ws=%v: queued line %d is %.60q, want %.60q (out of order, lost, or overwritten by a later read)", ws, i, queued[i], want[i])
			}
			if want[i] != answer && cap(queued[i]) != len(queued[i]) { // the answer is a copy of its own
				t.Fatalf("ws=%v: queued line %d has room to append into its neighbour", ws, i)
			}
		}
	}
}

// Over HTTP a burst of updates for one session is copied into one
// allocation, not one a line: routing a read's worth of lines (90, more
// than a run holds) allocates a handful of times. With a copy a line it
// is 90 or more.
func TestRouteBurstAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race; ./test.sh runs this without it")
	}
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a chunk of text"}}}}`
	data := strings.Repeat(line+"\n", 90)
	c := &conn{
		o:       &Options{MaxBufferedBytes: 1 << 20, MaxSessions: 4},
		streams: map[string]*stream{"": newStream(), "s1": newStream()},
		pending: map[string]string{},
		lastSID: "s1",
	}
	c.streams["s1"].queue = make([][]byte, 0, 128)
	lines := newAgentLines(strings.NewReader(data), 1<<20)
	first, err := nextLine(lines, !c.ws)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	next := c.route(first, lines)
	runtime.ReadMemStats(&after)
	if next != nil || len(c.streams["s1"].queue) != 90 {
		t.Fatalf("routed %d lines and handed back %q, want 90 and none", len(c.streams["s1"].queue), next)
	}
	// One run, or two if a GC emptied the pool: a block each, new when
	// the pool is empty (a slice and its header), and the stream's list
	// of them.
	if n := after.Mallocs - before.Mallocs; n > 8 {
		t.Errorf("routing 90 lines of one session allocated %d times, want at most 8 (a block a run)", n)
	}
}

// What a connection retains of the agent's output is what it queues:
// an agent writing a short update and then a block's worth of blank lines,
// again and again, makes the connection keep the updates, not the blocks
// they were read in (which would be 16 KiB for every ~180 bytes queued).
func TestRouteRetainsWhatItQueues(t *testing.T) {
	update := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`
	blank := strings.Repeat("\n", agentBlock)
	// A run just over runPooled, and blank lines to the end of the read
	// block: each read is one run, in a pooled block at most twice its
	// lines.
	half := runPooled/len(update) + 1
	halfRead := strings.Repeat(update+"\n", half) + strings.Repeat("\n", agentBlock-half*(len(update)+1))
	for _, tc := range []struct {
		name    string
		n       int // updates
		data    string
		perKept int64 // bytes of heap kept for a byte queued, at most
	}{
		{"an update a block", 200, strings.Repeat(update+blank, 200), 8},
		{"a half block's run a block", 50 * half, strings.Repeat(halfRead, 50), 3},
	} {
		for _, ws := range []bool{true, false} {
			c := &conn{
				ws:      ws,
				o:       &Options{MaxBufferedBytes: 1 << 30, MaxSessions: 4},
				streams: map[string]*stream{"": newStream()},
				pending: map[string]string{},
			}
			lines := newAgentLines(strings.NewReader(tc.data), 1<<20)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for {
				line, err := nextLine(lines, !c.ws)
				if errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				for line != nil {
					line = c.route(line, lines)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if c.buffered != tc.n*len(update) {
				t.Fatalf("%s, ws=%v: queued %d bytes, want %d", tc.name, ws, c.buffered, tc.n*len(update))
			}
			kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			if kept > tc.perKept*int64(c.buffered) {
				t.Errorf("%s, ws=%v: %d bytes queued keep %d bytes of heap, want at most %d", tc.name, ws, c.buffered, kept, tc.perKept*int64(c.buffered))
			}
			t.Logf("%s, ws=%v: %d bytes queued keep %d bytes of heap (%.2f×)", tc.name, ws, c.buffered, kept, float64(kept)/float64(c.buffered))
			runtime.KeepAlive(c)
		}
	}
}

// routeAll routes every line of lines until it ends, calling after for each
// burst route queued.
func routeAll(t *testing.T, c *conn, lines *agentLines, after func()) {
	t.Helper()
	var line []byte
	for {
		if line == nil {
			var err error
			if line, err = nextLine(lines, !c.ws); errors.Is(err, io.EOF) {
				return
			} else if err != nil {
				t.Fatal(err)
			}
			if line == nil {
				continue
			}
		}
		line = c.route(line, lines)
		after()
	}
}

// floodConn is an HTTP connection with one session stream, s1, and
// updateLine(i) is the i-th update of a flood for it.
func floodConn() *conn {
	return &conn{
		ctx:     context.Background(),
		o:       &Options{MaxBufferedBytes: 1 << 20, MaxSessions: 4},
		streams: map[string]*stream{"": newStream(), "s1": newStream()},
		pending: map[string]string{},
		lastSID: "s1",
	}
}

func updateLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %06d"}}}}`, i)
}

// A burst's lines are copied into pooled blocks (copyRun), and a block
// goes back to the pool only when its writer is done with every line of
// it: lines handed to a writer stay as they are while the agent's reader
// routes more, until the writer asks for its next batch; detach gives
// back what a writer that stopped held.
func TestRunBlocksReleased(t *testing.T) {
	var in []string
	for i := range 2000 {
		in = append(in, updateLine(i))
	}
	c := floodConn()
	st := c.streams["s1"]
	half := strings.Join(in[:1000], "\n") + "\n"
	routeAll(t, c, newAgentLines(strings.NewReader(half), 1<<20), func() {})
	if len(st.blocks) == 0 {
		t.Fatal("a burst of 1 000 updates was queued in no pooled block")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	batch, ok := c.nextBatch(ctx, st, nil, nil)
	if !ok || len(batch) != 1000 {
		t.Fatalf("took %d lines, want 1000", len(batch))
	}
	held := len(st.blocks)
	// The writer holds the batch while the reader routes the rest: none of
	// the batch's blocks is given back for those lines to be copied into.
	rest := strings.Join(in[1000:], "\n") + "\n"
	routeAll(t, c, newAgentLines(strings.NewReader(rest), 1<<20), func() {})
	for i, line := range batch {
		if string(line) != in[i] {
			t.Fatalf("handed line %d became %q while its writer held it, want %q", i, line, in[i])
		}
	}
	if len(st.blocks) <= held {
		t.Fatalf("%d blocks held after the second burst, want more than the first's %d", len(st.blocks), held)
	}
	// The writer's next batch gives back the first batch's blocks, and
	// only those: the second burst's lines are handed out now.
	second, ok := c.nextBatch(ctx, st, nil, batch)
	if !ok || len(second) != 1000 || string(second[0]) != in[1000] || string(second[999]) != in[1999] {
		t.Fatalf("the second batch has %d lines", len(second))
	}
	if len(st.blocks) == 0 {
		t.Fatal("the second batch's blocks were given back while it was being written")
	}
	for _, b := range st.blocks {
		if b.last <= 1000 {
			t.Fatalf("a block of the first batch (last line %d) is still held after it was written", b.last)
		}
	}
	// The writer stops (an SSE receiver goes away): detach gives back the
	// rest.
	st.receiver = true
	c.active = 2 // another request in flight: detach arms no idle timer
	c.detach("s1", st)
	if len(st.blocks) != 0 {
		t.Fatalf("%d blocks held after the stream's writer stopped", len(st.blocks))
	}
}

// TestRunBlocksAllocs: a flood routed and written in bursts allocates
// nothing once the pool holds its blocks (it was a block a run, 18 MB of
// garbage a 100 000-chunk turn).
func TestRunBlocksAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race; ./test.sh runs this without it")
	}
	var in strings.Builder
	for i := range 20000 {
		in.WriteString(updateLine(i))
		in.WriteByte('\n')
	}
	c := floodConn()
	st := c.streams["s1"]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var batch [][]byte
	write := func() {
		var ok bool
		if batch, ok = c.nextBatch(ctx, st, nil, batch); ok {
			c.buffered = 0
		}
	}
	data := in.String()
	// Warm up: the pool, the queue's two arrays.
	routeAll(t, c, newAgentLines(strings.NewReader(data[:len(data)/4]), 1<<20), write)
	write()
	lines := newAgentLines(strings.NewReader(data[len(data)/4:]), 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	routeAll(t, c, lines, write)
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > 20 {
		t.Errorf("routing and writing 15 000 updates allocated %d times, want at most 20 (blocks from the pool)", n)
	}
}

// within reports whether p's bytes are in blk's array.
func within(p []byte, blk *[]byte) bool {
	b := (*blk)[:cap(*blk)]
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return at >= start && at+uintptr(len(p)) <= start+uintptr(len(b))
}

// A run that takes every whole line of a read, half a block or more, is
// queued in the block it was read into, which goes to the stream with its
// lines (and back to the pool once they are written): the agent's reader
// goes on in another block, the unread start of a line carried over. A
// run followed by a line it does not take is copied: route hands that
// line back to be routed next, and it must stay where it was read.
func TestRunQueuedInItsBlock(t *testing.T) {
	var updates strings.Builder
	for i := 0; updates.Len() < runPooled+1000; i++ {
		updates.WriteString(updateLine(i) + "\n")
	}
	const partial = `{"jsonrpc":"2.0","met`
	t.Run("whole read", func(t *testing.T) {
		c := floodConn()
		st := c.streams["s1"]
		lines := newAgentLines(strings.NewReader(updates.String()+partial), 1<<20)
		blk := lines.pooled
		line, err := nextLine(lines, !c.ws)
		if err != nil {
			t.Fatal(err)
		}
		if next := c.route(line, lines); next != nil {
			t.Fatalf("route handed back %q", next)
		}
		if len(st.blocks) != 1 || st.blocks[0].buf != blk {
			t.Fatalf("the stream holds %d blocks, want the read's", len(st.blocks))
		}
		for i, q := range st.queue {
			if !within(q, blk) {
				t.Fatalf("line %d was copied out of the block it was read into", i)
			}
		}
		if lines.pooled == blk || lines.pooled == nil {
			t.Fatal("the agent's reader kept the block it handed over")
		}
		if got := string(lines.buf[lines.start:lines.end]); got != partial {
			t.Fatalf("carried over %q, want %q", got, partial)
		}
	})
	t.Run("a line after the run", func(t *testing.T) {
		c := floodConn()
		st := c.streams["s1"]
		response := `{"jsonrpc":"2.0","id":7,"result":{}}`
		lines := newAgentLines(strings.NewReader(updates.String()+response+"\n"), 1<<20)
		blk := lines.pooled
		line, err := nextLine(lines, !c.ws)
		if err != nil {
			t.Fatal(err)
		}
		next := c.route(line, lines)
		if string(next) != response {
			t.Fatalf("route handed back %q, want the response", next)
		}
		if lines.pooled != blk || !within(next, blk) {
			t.Fatal("the line handed back is in a block the agent's reader gave up")
		}
		for i, q := range st.queue {
			if within(q, blk) {
				t.Fatalf("line %d is queued in the block the agent's reader reads on in", i)
			}
		}
	})
}
