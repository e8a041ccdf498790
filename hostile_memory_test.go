package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// After a line of several MiB (in bounds or over the cap), the reader does
// not keep a buffer of that size for the rest of the connection.
func TestReaderBufferShrinksAfterHugeLine(t *testing.T) {
	lines := map[string]string{
		"in bounds": `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 3<<20) + `"}`,
		"oversized": `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("y", 9<<20) + `"}`,
	}
	for name, big := range lines {
		t.Run(name, func(t *testing.T) {
			in := big + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
			w := newWire(strings.NewReader(in), discard{}, nil, nil,
				wireLimits{maxLine: 4 << 20, maxPending: 1, maxBatch: 1, maxQueued: 1 << 20},
				wireHooks{response: func([]byte, []byte) bool { return false }, diag: func(string, string, []byte) {}})
			defer w.closeWrite(time.Second)
			for {
				line, err := w.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(line), `"id":2`) {
					break
				}
			}
			if c := cap(w.buf); c > keepBufBytes {
				t.Errorf("the reader keeps a %d-byte buffer", c)
			}
		})
	}
}

type countingFile struct {
	calls   atomic.Int64
	content string
}

func (f *countingFile) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	f.calls.Add(1)
	return &ReadTextFileResponse{Content: f.content}, nil
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// An agent that asks for many large file reads and then stops reading its
// input does not make the client queue the replies: once
// MaxQueuedWriteBytes are waiting, the handlers wait too.
func TestRepliesWaitForAnAgentThatStopsReading(t *testing.T) {
	const fileSize, reads, budget = 1 << 20, 200, 1 << 20
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	fs := &countingFile{content: strings.Repeat("a", fileSize)}
	probe := make(chan struct{}, 1)
	type res struct {
		c   *Client
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Connect(context.Background(), &StreamTransport{Reader: cr, Writer: cw}, &ClientOptions{
			FileSystem: fs,
			Limits:     Limits{MaxQueuedWriteBytes: budget},
			OnDiagnostic: func(d Diagnostic) {
				if d.Kind == "junk_line" {
					probe <- struct{}{}
				}
			},
		})
		ch <- res{c, err}
	}()
	br := bufio.NewReader(ar)
	var init rawMsg
	line, _ := br.ReadBytes('\n')
	if err := json.Unmarshal(line, &init); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": init.ID, "result": defaultInit})
	aw.Write(append(b, '\n'))
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer func() {
		ar.Close() // the client's pending writes fail
		r.c.Close()
		aw.Close()
	}()
	before := heapInuse()

	// From here on the agent never reads again.
	go func() {
		for i := range reads {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "fs/read_text_file", "params": map[string]any{"sessionId": "s", "path": "/f"}})
			if _, err := aw.Write(append(b, '\n')); err != nil {
				return
			}
		}
		aw.Write([]byte("probe\n"))
	}()
	waitFor(t, probe, "the reader to take in every request")
	deadline := time.Now().Add(hostileTimeout)
	// Settled: replies fill the budget, so no further handler can start.
	for !budgetSettled(r.c.wire) && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	after := heapInuse()
	grown := int64(after) - int64(before)
	t.Logf("%d of %d reads served; heap in use grew by %d MiB", fs.calls.Load(), reads, grown>>20)
	if grown > 48<<20 {
		t.Errorf("heap in use grew by %d MiB with a write budget of %d MiB", grown>>20, budget>>20)
	}
	if n := fs.calls.Load(); n > reads/4 {
		t.Errorf("%d reads served for an agent that reads nothing", n)
	}
}

func budgetSettled(w *wire) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queued > 0 && w.queued+w.admitted+w.limits.maxQueued/bulkyShare > w.limits.maxQueued
}
