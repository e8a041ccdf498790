package engine

import (
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
	// About 560 KB: in 32 KiB reads, not 2 KiB ones.
	if src.reads > 40 {
		t.Errorf("%d reads for %d bytes: the buffer did not grow", src.reads, in.Len())
	}
	// A burst holds no more than 32 KiB of read buffer: with 500 agents
	// bursting at once, 64 KiB ones were most of the process's peak above
	// its steady size.
	if src.maxRoom > 32<<10 {
		t.Errorf("a read into %d bytes: the burst buffer is over 32 KiB", src.maxRoom)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if r.br.large != nil || len(r.br.buf) != smallReadBuf {
		t.Errorf("after a short read the reader kept a %d-byte buffer", len(r.br.buf))
	}
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
