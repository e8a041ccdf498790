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

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
)

type countingFile struct {
	calls   atomic.Int64
	content string
}

func (f *countingFile) ReadTextFile(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	f.calls.Add(1)
	return &schema.ReadTextFileResponse{Content: f.content}, nil
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
			FS:     FileSystemHandlers{ReadTextFile: fs.ReadTextFile},
			Limits: Limits{MaxQueuedWriteBytes: budget},
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
	for !budgetSettled(r.c.conn.Load().wire) && time.Now().Before(deadline) {
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

func budgetSettled(w *engine.Wire) bool {
	b := w.Budget()
	return b.Queued > 0 && b.Queued+b.Admitted+b.Share > b.Max
}

// Every reply's reservation in the write budget is released once written:
// a long-lived connection does not leak budget.
func TestWriteBudgetReleasedAfterReplies(t *testing.T) {
	fs := &countingFile{content: strings.Repeat("b", 10<<10)}
	c, a := connectRaw(t, &ClientOptions{FS: FileSystemHandlers{ReadTextFile: fs.ReadTextFile}, Permission: AllowAll, Limits: Limits{MaxQueuedWriteBytes: 64 << 10}}, nil)
	newSessionRaw(t, c, a)
	const n = 50
	go func() {
		for i := range n {
			a.send(map[string]any{"jsonrpc": "2.0", "id": i, "method": "fs/read_text_file", "params": map[string]any{"sessionId": "s1", "path": "/f"}})
			a.send(map[string]any{"jsonrpc": "2.0", "id": "p" + string(rune('a'+i%26)) + string(rune('0'+i/26)), "method": "session/request_permission", "params": hostilePermParams("t")})
		}
	}()
	for range 2 * n {
		if m := a.next(); m.Error != nil {
			t.Fatalf("error reply %s", m.line)
		}
	}
	deadline := time.Now().Add(hostileTimeout)
	for !budgetEmpty(c.conn.Load().wire) && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if b := c.conn.Load().wire.Budget(); b.Queued != 0 || b.Admitted != 0 || b.Reservations != 0 {
		t.Errorf("after every reply was written: queued %d, admitted %d, reservations %d", b.Queued, b.Admitted, b.Reservations)
	}
}

func budgetEmpty(w *engine.Wire) bool {
	b := w.Budget()
	return b.Queued == 0 && b.Admitted == 0 && b.Reservations == 0
}

// An agent that floods requests past MaxPendingRequests and reads nothing
// makes the reader stop reading once the write budget is spent, rather than
// queue refusals without end.
func TestRefusalsWaitForAnAgentThatStopsReading(t *testing.T) {
	const budget, flood = 4 << 10, 2000
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	ch := make(chan *Client, 1)
	release := make(chan struct{})
	go func() {
		c, err := Connect(context.Background(), &StreamTransport{Reader: cr, Writer: cw}, &ClientOptions{
			Limits: Limits{MaxPendingRequests: 1, MaxQueuedWriteBytes: budget},
			Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return RejectAll(ctx, req)
			},
		})
		if err != nil {
			t.Error(err)
		}
		ch <- c
	}()
	br := bufio.NewReader(ar)
	var init rawMsg
	line, _ := br.ReadBytes('\n')
	if err := json.Unmarshal(line, &init); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": init.ID, "result": defaultInit})
	aw.Write(append(b, '\n'))
	c := <-ch
	if c == nil {
		t.FailNow()
	}
	defer func() {
		close(release)
		ar.Close()
		c.Close()
		aw.Close()
	}()
	sent := make(chan int, 1)
	go func() {
		i := 0
		for ; i < flood; i++ {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "session/request_permission", "params": hostilePermParams("t")})
			if _, err := aw.Write(append(b, '\n')); err != nil {
				break
			}
		}
		sent <- i
	}()
	// Either the reader ends up waiting for room (someone waits on room,
	// and only the reader can: the one handler waits on the user), or the
	// agent got all its requests in.
	deadline := time.Now().Add(hostileTimeout)
	for !readerWaiting(c.conn.Load().wire) && len(sent) == 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	queued := c.conn.Load().wire.Budget().Queued
	if queued > budget+1<<10 {
		t.Errorf("%d bytes of refusals queued with a budget of %d", queued, budget)
	}
}

func readerWaiting(w *engine.Wire) bool { return w.Budget().Waiting }
