package engine

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/creachadair/jrpc2"
)

// diagRecorder collects the kinds of the wire's diagnostics.
type diagRecorder struct {
	mu sync.Mutex
	ks []string
	ch chan string
}

func newDiagRecorder() *diagRecorder { return &diagRecorder{ch: make(chan string, 100)} }

func (r *diagRecorder) diag(kind, _ string, _ []byte) {
	r.mu.Lock()
	r.ks = append(r.ks, kind)
	r.mu.Unlock()
	select {
	case r.ch <- kind:
	default:
	}
}

func (r *diagRecorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ks...)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// request is the Request the tests hand the wire.
type request struct{}

func (request) Withdraw() {}

func testLimits() Limits {
	return Limits{MaxLine: 1 << 20, MaxPending: 1, MaxBatch: 1, MaxQueued: 1 << 20}
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// recvResult runs Recv on its own goroutine.
func recvResult(w *Wire) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := w.Recv()
		ch <- err
	}()
	return ch
}

// At the end of the agent's output, the reader does not report the end to
// jrpc2 (which would fail pending calls, racing its own delivery of
// answers it already has) until every response it handed on has reached
// its caller — with no clock involved: it waits for exactly those calls.
// A repeated answer and an answer to an unknown id are dropped, so they are
// never waited for; Close ends the wait too.
func TestEndOfInputWaitsForHandedResponses(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"again":true}}` + "\n" +
		`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n"
	rec := newDiagRecorder()
	w := NewWire(strings.NewReader(in), discard{}, nil, nil, testLimits(),
		Hooks{Response: func([]byte, string, []byte) {}, Diag: rec.diag})
	defer w.CloseWrite(time.Second)
	w.calls["1"] = &callRecord{method: "x"}

	line, err := w.Recv()
	if err != nil || !strings.Contains(string(line), `"id":1`) {
		t.Fatalf("Recv = %s, %v; want the answer to call 1", line, err)
	}
	done := recvResult(w)
	select {
	case err := <-done:
		t.Fatalf("Recv returned %v before the answer handed on reached its caller", err)
	case <-rec.ch: // the repeated answer was dropped
	}
	<-rec.ch // and so was the unknown id
	select {
	case err := <-done:
		t.Fatalf("Recv returned %v before the answer handed on reached its caller", err)
	default:
	}
	if out := w.Settle("1"); !out.Answered {
		t.Error("Settle: the call is not marked answered")
	}
	if err := waitFor(t, done, "Recv after Settle"); err != io.EOF {
		t.Errorf("Recv = %v, want io.EOF", err)
	}
	if got := rec.kinds(); len(got) != 2 || got[0] != "late_response" || got[1] != "late_response" {
		t.Errorf("diagnostics = %v, want two late_response", got)
	}

	// An answer never settled (its caller is gone): Close ends the wait.
	w2 := NewWire(strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"), discard{}, nil, nil, testLimits(),
		Hooks{Response: func([]byte, string, []byte) {}})
	defer w2.CloseWrite(time.Second)
	w2.calls["1"] = &callRecord{method: "x"}
	if _, err := w2.Recv(); err != nil {
		t.Fatal(err)
	}
	done = recvResult(w2)
	w2.Close()
	if err := waitFor(t, done, "Recv after Close"); err != io.EOF {
		t.Errorf("Recv = %v, want io.EOF", err)
	}
}

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
			lim := testLimits()
			lim.MaxLine = 4 << 20
			w := NewWire(strings.NewReader(in), discard{}, nil, nil, lim,
				Hooks{Response: func([]byte, string, []byte) {}, Diag: func(string, string, []byte) {}})
			defer w.CloseWrite(time.Second)
			// The two responses answer calls of the client's.
			w.calls["1"], w.calls["2"] = &callRecord{}, &callRecord{}
			for {
				line, err := w.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(line), `"id":2`) {
					break
				}
			}
			if c := w.lines.BufCap(); c > KeepBufBytes {
				t.Errorf("the reader keeps a %d-byte buffer", c)
			}
		})
	}
}

// Only ids that are a JSON string or number exactly as written may be
// echoed into a frame; the scanner for oversized lines flags a cut-off id.
func TestValidIDIsTheJSONGrammar(t *testing.T) {
	for _, id := range []string{`1`, `-1`, `0`, `1.5`, `1e3`, `-0.5E-2`, `"a"`, `"\u00e9\n"`, `""`} {
		if !ValidID([]byte(id)) {
			t.Errorf("ValidID(%s) = false", id)
		}
	}
	for _, id := range []string{``, `01`, `-`, `1.`, `1.2.3`, `0000000`, `"abc`, `"a"b"`, `"\x"`, `true`, `null`, `{}`, `[1]`, `1 `, `+1`} {
		if ValidID([]byte(id)) {
			t.Errorf("ValidID(%s) = true", id)
		}
	}
	var sc jsonscan.IDScanner
	sc.Feed([]byte(`{"id":"` + strings.Repeat("i", 300) + `","result":1}`))
	if !sc.IDCut {
		t.Errorf("a 300-byte id was not flagged as cut: %q", sc.ID)
	}
}

// The error frames the wire makes up are the client's Error object: code,
// message, and data only when there is some.
func TestErrorFrameShape(t *testing.T) {
	for _, tc := range []struct {
		data json.RawMessage
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"m \"q\""}}`},
		{limitData("MaxBatchItems", 3), `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"m \"q\"","data":{"limit":"MaxBatchItems","value":3}}}`},
	} {
		if got := string(errorFrame([]byte(`"x"`), codeInvalidRequest, `m "q"`, tc.data)); got != tc.want {
			t.Errorf("errorFrame = %s, want %s", got, tc.want)
		}
	}
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\njunk\n\n"), 64)
	f.Add([]byte("{\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"plan\",\"entries\":[]}}}\r\n"), 16)
	f.Add([]byte("[{\"id\":1,\"result\":{}},{\"method\":\"x\"}]"), 1024)
	f.Add([]byte("{\"id\":\"a\",\"method\":\"x\"}\n{\"id\":\"a\",\"method\":\"x\"}\n[{\"id\":1,\"method\":\"m\"},{\"id\":2,\"method\":\"m\"},{\"id\":3,\"method\":\"m\"},{\"id\":4,\"method\":\"m\"},{\"id\":5,\"method\":\"m\"}]\n"), 1024)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<20 {
			max = 1 << 20
		}
		out := &frameChecker{}
		w := NewWire(strings.NewReader(string(data)), out, nil, nil, Limits{MaxLine: max, MaxPending: 4, MaxBatch: 4, MaxQueued: 1 << 20}, Hooks{
			Update:       func([]byte, jsonscan.Update) {},
			Notification: func(string, []byte) {},
			Response:     func([]byte, string, []byte) {},
			Request:      func([]byte, string, []byte) Request { return request{} },
			Diag:         func(string, string, []byte) {},
		})
		// The consumer is jrpc2 itself: whatever the input, its reader must
		// only ever stop at the end of the input, never on something the
		// wire handed it.
		stopped := make(chan error, 1)
		rpc := jrpc2.NewClient(w, &jrpc2.ClientOptions{OnStop: func(_ *jrpc2.Client, err error) { stopped <- err }})
		if err := <-stopped; err != io.EOF {
			t.Errorf("jrpc2 stopped with %v, want io.EOF", err)
		}
		rpc.Close()
		w.CloseWrite(time.Second)
		if bad := out.invalid(); bad != "" {
			t.Errorf("the client wrote an invalid frame: %q", bad)
		}
	})
}

// frameChecker is a writer that checks every line written is valid JSON.
type frameChecker struct {
	mu  sync.Mutex
	buf []byte
}

func (fc *frameChecker) Write(p []byte) (int, error) {
	fc.mu.Lock()
	fc.buf = append(fc.buf, p...)
	fc.mu.Unlock()
	return len(p), nil
}

func (fc *frameChecker) invalid() string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for _, l := range strings.Split(string(fc.buf), "\n") {
		if l != "" && !json.Valid([]byte(l)) {
			return l
		}
	}
	return ""
}
