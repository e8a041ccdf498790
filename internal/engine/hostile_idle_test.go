package engine

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/jsonscan"
)

// A connection that has carried a burst and gone quiet holds only small
// buffers: the agent controls how much traffic comes and when, and a host
// with a thousand mostly idle agents must not keep a burst-sized read
// buffer, write buffer and long-line buffer for each (415155e kept a
// 64 KiB read buffer, a 64 KiB write buffer and the longest line's buffer,
// up to 1 MiB, for the connection's life).
func TestIdleWiresHoldLittle(t *testing.T) {
	const n = 32
	const perWire = 16 << 10 // heap bytes an idle wire may retain
	var line strings.Builder
	for i := range 2000 {
		text := "chunk"
		if i%100 == 0 {
			text = strings.Repeat("long ", 2000) // 10 KB lines now and then
		}
		fmt.Fprintf(&line, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"%s %d"}}}`+"\n", text, i)
	}
	burst := line.String()
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("o", 300) + `"}}`)

	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // a second time: the pools' victim caches go too
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	type conn struct {
		w           *Wire
		inW, outR   *os.File
		recvd, sent chan struct{}
	}
	conns := make([]conn, n)
	for i := range conns {
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := conn{inW: inW, outR: outR, recvd: make(chan struct{}), sent: make(chan struct{})}
		updates := 0
		c.w = NewWire(inR, outW, inR.Close, outW.Close, testLimits(), Hooks{
			Update: func([]byte, jsonscan.Update) {
				if updates++; updates == 2000 {
					close(c.recvd)
				}
			},
			Notification: func(string, []byte) {},
			Response:     func([]byte, string, []byte) {},
			Request:      func([]byte, string, []byte) Request { return nil },
			Diag:         func(string, string, []byte) {},
		})
		go func() {
			for {
				if _, err := c.w.Recv(); err != nil {
					return
				}
			}
		}()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.inW.Close()
			c.w.CloseWrite(time.Second)
			c.w.Close()
			c.outR.Close()
		}
	}()
	for _, c := range conns {
		go func() { _, _ = io.WriteString(c.inW, burst) }()
		for range 200 {
			if err := c.w.Send(frame); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range conns {
		<-c.recvd
	}
	// Every update is in; each reader goes back to waiting and the writers
	// drain their queues. Nothing signals those last steps, so poll.
	var per uint64
	for deadline := time.Now().Add(10 * time.Second); ; {
		per = (heap() - min(base, heap())) / n
		if per <= perWire || time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	t.Logf("an idle wire retains %d heap bytes", per)
	if per > perWire {
		t.Errorf("an idle wire retains %d heap bytes after a burst, want at most %d", per, perWire)
	}
}
