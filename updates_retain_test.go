package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/acpclient/acp/schema"
)

// A reader of Turn.Updates or Turn.Events that has caught up and waits
// for the next update holds none of the chunks it was yielded: they are
// its to keep or drop. (The iteration builds each batch's chunks in one
// slice it uses again; a waiting reader clears it.) Here a reader keeps
// only weak pointers to 300 chunks, two batches, and waits on a turn still
// running; every chunk is collected.
func TestUpdatesWaitingReaderHoldsNoChunks(t *testing.T) {
	for _, r := range chunkReaders {
		t.Run(r.name, func(t *testing.T) {
			const n = 300 // a full batch (logChunk) and part of another
			_, s, a := startPipeAgent(t)
			release := make(chan struct{})
			var once sync.Once
			end := func() { once.Do(func() { close(release) }) }
			t.Cleanup(end) // before the agent's own cleanup stops it
			f := func(w io.Writer, _ json.RawMessage) {
				w.Write(renderChunks(n, 24))
				w.(*bufio.Writer).Flush()
				<-release
			}
			a.turn.Store(&f)
			turn, err := s.Prompt(context.Background(), schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			weaks := make(chan weak.Pointer[schema.AgentMessageChunk], n)
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.each(turn, func(u schema.Update) {
					weaks <- weak.Make(u.(*schema.AgentMessageChunk))
				})
			}()
			ws := make([]weak.Pointer[schema.AgentMessageChunk], 0, n)
			for range n {
				ws = append(ws, <-weaks)
			}
			// The reader has yielded all n; it waits once it has made the
			// turn's notifier's channel under the session's lock (no other
			// reader runs).
			for {
				s.mu.Lock()
				waiting := turn.updated.ch != nil
				s.mu.Unlock()
				if waiting {
					break
				}
				runtime.Gosched()
			}
			runtime.GC()
			runtime.GC()
			held := 0
			for _, w := range ws {
				if w.Value() != nil {
					held++
				}
			}
			end()
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			<-done
			if held != 0 {
				t.Errorf("a reader waiting for the next update still holds %d of the %d chunks it was yielded and dropped", held, n)
			}
		})
	}
}
