package engine

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Lines come back without terminators, CRLF included; an over-long line is
// consumed whole and reported by size with its id and method recovered; a
// final line without a newline is still a line.
func TestLineReader(t *testing.T) {
	long := `{"id":7,"method":"m","params":"` + strings.Repeat("x", 100) + `"}`
	in := "a\r\n" + long + "\n\nb\nlast"
	r := NewLineReader(strings.NewReader(in), 32)
	want := []struct {
		line string
		size int64
	}{{"a", 3}, {"", int64(len(long) + 1)}, {"", 1}, {"b", 2}, {"last", 4}}
	for i, w := range want {
		line, size, err := r.Next()
		if err != nil || string(line) != w.line || size != w.size {
			t.Fatalf("line %d = %q, %d, %v; want %q, %d", i, line, size, err, w.line, w.size)
		}
		if size > 32 {
			if sc := r.Oversized(); string(sc.ID) != "7" || sc.Method != "m" {
				t.Errorf("recovered id %q method %q, want 7 and m", sc.ID, sc.Method)
			}
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last line: %v, want io.EOF", err)
	}
}

// A long line in bounds does not leave its buffer behind.
func TestLineReaderDropsHugeBuffer(t *testing.T) {
	r := NewLineReader(strings.NewReader(strings.Repeat("x", 3<<20)+"\nshort\n"), 4<<20)
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if c := r.BufCap(); c > KeepBufBytes {
		t.Errorf("kept a %d-byte buffer", c)
	}
}

// Under a burst the reader moves to a large buffer even when no read ends
// on a line boundary, and goes back to its small one once the input is
// drained; lines come through whole either way.
func TestLineReaderGrowsAndShrinks(t *testing.T) {
	var in strings.Builder
	for i := range 5000 {
		in.WriteString(strings.Repeat("x", 100+i%37) + "\n")
	}
	src := &countingReader{r: strings.NewReader(in.String())}
	r := NewLineReader(src, 1<<20)
	for i := range 5000 {
		line, _, err := r.Next()
		if err != nil || len(line) != 100+i%37 {
			t.Fatalf("line %d: %d bytes, %v", i, len(line), err)
		}
	}
	// About 560 KB: in 32 KiB and 256 KiB reads, not 2 KiB ones.
	if src.reads > 10 {
		t.Errorf("%d reads for %d bytes: the buffer did not grow", src.reads, in.Len())
	}
	if src.maxRoom > deepReadBuf {
		t.Errorf("a read into %d bytes: the burst buffer is over %d", src.maxRoom, deepReadBuf)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if r.br.large != nil || len(r.br.buf) != smallReadBuf {
		t.Errorf("after a short read the reader kept a %d-byte buffer", len(r.br.buf))
	}
}

// burstLines is n lines of 100 to 136 bytes.
func burstLines(n int) string {
	var in strings.Builder
	for i := range n {
		in.WriteString(strings.Repeat("x", 100+i%37) + "\n")
	}
	return in.String()
}

// readAll reads every line of r and checks each one's length (as
// burstLines wrote them) and the end.
func readAll(t *testing.T, r *LineReader, n int) {
	t.Helper()
	for i := range n {
		line, _, err := r.Next()
		if err != nil || len(line) != 100+i%37 {
			t.Fatalf("line %d: %d bytes, %v", i, len(line), err)
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
}

// A burst takes a deep buffer only while one of the process's few is free:
// with every slot held elsewhere it reads in 32 KiB, as 500 agents bursting
// at once must (each holding 256 KiB would be 128 MB). A reader gives its
// slot back when the input ends.
func TestDeepReadBufsBounded(t *testing.T) {
	held := deepHeld.Load()
	deepHeld.Add(maxDeepReadBufs)
	src := &countingReader{r: strings.NewReader(burstLines(5000))}
	readAll(t, NewLineReader(src, 1<<20), 5000)
	deepHeld.Add(-maxDeepReadBufs)
	if src.maxRoom > largeReadBuf {
		t.Errorf("with every deep buffer held, a read into %d bytes", src.maxRoom)
	}
	if got := deepHeld.Load(); got != held {
		t.Errorf("deep buffers held: %d after the reads, %d before", got, held)
	}

	src = &countingReader{r: strings.NewReader(burstLines(5000))}
	readAll(t, NewLineReader(src, 1<<20), 5000)
	if src.maxRoom <= largeReadBuf {
		t.Errorf("with deep buffers free, the largest read was into %d bytes", src.maxRoom)
	}
	if got := deepHeld.Load(); got != held {
		t.Errorf("deep buffers held after the input ended: %d, %d before", got, held)
	}
}

// A reader that gives at most 64 KiB a read (a pipe of the default size)
// never fills a deep buffer, but its burst is not over: the reader keeps
// reading in 32 KiB reads or larger throughout, never in its 2 KiB buffer.
func TestDeepReadKeptThroughBurst(t *testing.T) {
	src := &cappedReader{r: strings.NewReader(burstLines(20000)), max: 64 << 10}
	readAll(t, NewLineReader(src, 1<<20), 20000)
	if src.deepRooms == 0 {
		t.Fatal("no read was given a deep buffer")
	}
	if src.smallAfterLarge > 0 {
		t.Errorf("%d reads into the small buffer after the burst began", src.smallAfterLarge)
	}
}

// A burst is over when a read comes back short and leaves nothing unread:
// the reader then drops its deep buffer, frees the slot, and waits on its
// small buffer, as between any two bursts, with the connection still open.
func TestDeepReadGivenBackWhenBurstEnds(t *testing.T) {
	held := deepHeld.Load()
	burst := burstLines(5000)
	end := strings.LastIndexByte(burst[:len(burst)-1000], '\n') + 1
	src := &scriptedReader{parts: []string{burst[:end], burst[end:]}}
	r := NewLineReader(src, 1<<20)
	readAll(t, r, 5000)
	if src.deepRooms == 0 {
		t.Fatal("no read was given a deep buffer: the test tests nothing")
	}
	if got := src.rooms[src.firstOf[1]]; got > smallReadBuf {
		t.Errorf("the read after the burst's end was given %d bytes, not the small buffer", got)
	}
	if got := deepHeld.Load(); got != held {
		t.Errorf("deep buffers held: %d after the burst, %d before", got, held)
	}
}

// scriptedReader serves each part as a burst: it fills every buffer it is
// given until the part's last read, which comes back short, at the
// part's end; then the next part, then io.EOF.
type scriptedReader struct {
	parts     []string
	part, off int
	rooms     []int // the room given to each read
	firstOf   []int // the index in rooms of each part's first read
	deepRooms int
}

func (s *scriptedReader) Read(b []byte) (int, error) {
	s.rooms = append(s.rooms, len(b))
	if len(b) > largeReadBuf {
		s.deepRooms++
	}
	if s.part == len(s.parts) {
		return 0, io.EOF
	}
	if s.off == 0 {
		s.firstOf = append(s.firstOf, len(s.rooms)-1)
	}
	n := copy(b, s.parts[s.part][s.off:])
	if s.off += n; s.off == len(s.parts[s.part]) {
		s.part, s.off = s.part+1, 0
	}
	return n, nil
}

// An input that ends in the middle of a burst (the agent killed while it
// writes) leaves the reader with no deep buffer and its slot free: nothing
// more is read, and the connection may outlive its input.
func TestDeepReadBufGivenBackAtError(t *testing.T) {
	held := deepHeld.Load()
	src := &endlessReader{left: 2 << 20}
	r := NewLineReader(src, 1<<20)
	var err error
	for err == nil {
		_, _, err = r.Next()
	}
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("Next = %v, want the reader's error", err)
	}
	if !src.deep {
		t.Fatal("no read was given a deep buffer: the test tests nothing")
	}
	if r.br.large != nil {
		t.Errorf("the reader kept a %d-byte pooled buffer after its input failed", len(*r.br.large))
	}
	if got := deepHeld.Load(); got != held {
		t.Errorf("deep buffers held: %d after the input failed, %d before", got, held)
	}
}

// endlessReader fills every buffer it is given with 100-byte lines, so a
// reader that reads it stays in a burst, until left bytes are read; then
// it fails.
type endlessReader struct {
	left int
	col  int
	deep bool // a read was given a deep buffer
}

func (e *endlessReader) Read(b []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.ErrClosedPipe
	}
	e.deep = e.deep || len(b) > largeReadBuf
	for i := range b {
		if e.col++; e.col == 100 {
			b[i], e.col = '\n', 0
		} else {
			b[i] = 'x'
		}
	}
	e.left -= len(b)
	return len(b), nil
}

// cappedReader returns at most max bytes a read.
type cappedReader struct {
	r               io.Reader
	max             int
	large           bool // a read was given more than the small buffer
	deepRooms       int  // reads given more than a large buffer
	smallAfterLarge int  // reads into the small buffer that found data, after one given more
}

func (c *cappedReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b[:min(len(b), c.max)])
	switch {
	case len(b) > largeReadBuf:
		c.deepRooms++
	case len(b) <= smallReadBuf && c.large && n > 0:
		c.smallAfterLarge++
	}
	c.large = c.large || len(b) > smallReadBuf
	return n, err
}

type countingReader struct {
	r       io.Reader
	reads   int
	maxRoom int // the largest buffer a read was given
}

func (c *countingReader) Read(b []byte) (int, error) {
	c.reads++
	c.maxRoom = max(c.maxRoom, len(b))
	return c.r.Read(b)
}
