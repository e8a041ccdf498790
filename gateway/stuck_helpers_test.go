package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpclient/acp"
)

// stuckAgent answers initialize, then never reads its stdin again: a
// write of more than the pipe holds blocks until the connection closes.
type stuckAgent struct {
	in     *io.PipeReader // the agent's stdin
	inW    *io.PipeWriter
	out    *io.PipeReader // the agent's stdout
	outW   *io.PipeWriter
	closed sync.Once
}

func dialStuck(context.Context) (acp.Conn, error) {
	a := &stuckAgent{}
	a.in, a.inW = io.Pipe()
	a.out, a.outW = io.Pipe()
	go func() {
		line, err := bufio.NewReader(a.in).ReadString('\n')
		if err != nil {
			return
		}
		id := line[strings.Index(line, `"id":`)+5:]
		id = id[:strings.IndexAny(id, ",}")]
		io.WriteString(a.outW, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":1}}`+"\n")
		// and reads nothing more
	}()
	return a, nil
}

func (a *stuckAgent) Read(b []byte) (int, error)  { return a.out.Read(b) }
func (a *stuckAgent) Write(b []byte) (int, error) { return a.inW.Write(b) }
func (a *stuckAgent) Close() error {
	a.closed.Do(func() {
		a.in.CloseWithError(io.ErrClosedPipe)
		a.outW.Close()
	})
	return nil
}

// heapObjects is the bytes of live and unswept heap objects (no GC forced).
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapPeak samples heapObjects until the returned func is called, which
// returns the peak above the baseline taken (after a GC) at the start.
func heapPeak() func() (peak int64) {
	runtime.GC()
	base := heapObjects()
	var max atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			if h := heapObjects(); h > max.Load() {
				max.Store(h)
			}
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return func() int64 { close(stop); <-done; return int64(max.Load()) - int64(base) }
}

// bigNotification is a POST body of n bytes (a notification with padding)
// made as it is sent, so that the client holds none of it.
func bigNotification(n int) (io.Reader, int64) {
	head, tail := `{"jsonrpc":"2.0","method":"_x/pad","params":{"pad":"`, `"}}`
	pad := int64(n - len(head) - len(tail))
	return io.MultiReader(strings.NewReader(head), io.LimitReader(infinite('a'), pad), strings.NewReader(tail)), int64(n)
}

func postBig(u, conn string, n int) (int, string, error) {
	body, size := bigNotification(n)
	req, _ := http.NewRequest("POST", u, body)
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderConnectionID, conn)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}
