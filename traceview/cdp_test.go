package traceview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// A headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: fd 3 carries commands to it, fd 4 its
// replies and events, each a JSON message ended by a NUL byte). A pipe
// needs no port and no new dependency; one browser serves every test of
// the package, each page in a tab of its own.

// chromeFlags are the flags that work on the CI machine: without the
// background-networking ones Chromium's own connections are refused and
// it stalls.
var chromeFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--remote-debugging-pipe", "--hide-scrollbars", "--mute-audio",
}

type chromium struct {
	cmd  *exec.Cmd
	dir  string
	in   io.WriteCloser
	out  io.ReadCloser
	done chan struct{} // closed when the reader ends

	wmu sync.Mutex // serialises writes to in
	mu  sync.Mutex
	id  int
	res map[int]chan cdpMsg
	sub map[string]chan cdpMsg // by sessionId + " " + method: one waiter each
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

var (
	chromeMu   sync.Mutex
	chromeOnce *chromium
	chromeErr  error
)

// chromePath is the browser: $ACP_CHROMIUM, or chromium on $PATH.
func chromePath() (string, error) {
	if p := os.Getenv("ACP_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on $PATH (apt-get install chromium, or set ACP_CHROMIUM)")
}

// chrome returns the package's browser, starting it on first use. Without
// a browser the test is skipped, except under CI=true, where it fails: CI
// installs chromium (.ci/run), so a missing one is a broken CI.
func chrome(t *testing.T) *chromium {
	t.Helper()
	chromeMu.Lock()
	defer chromeMu.Unlock()
	if chromeOnce == nil && chromeErr == nil {
		chromeOnce, chromeErr = startChrome()
	}
	if chromeErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: a missing browser is a failure)", chromeErr)
		}
		t.Skipf("%v; the browser tests need it (under CI=true they fail instead)", chromeErr)
	}
	return chromeOnce
}

func closeChrome() {
	chromeMu.Lock()
	defer chromeMu.Unlock()
	if chromeOnce != nil {
		chromeOnce.close()
		chromeOnce = nil
	}
}

func startChrome() (*chromium, error) {
	path, err := chromePath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "traceview-chrome-")
	if err != nil {
		return nil, err
	}
	// fd 3: our commands; fd 4: its messages.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	msgR, msgW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, append(chromeFlags, "--user-data-dir="+dir, "about:blank")...)
	cmd.ExtraFiles = []*os.File{cmdR, msgW}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmdR.Close()
	msgW.Close()
	c := &chromium{cmd: cmd, dir: dir, in: cmdW, out: msgR, done: make(chan struct{}),
		res: map[int]chan cdpMsg{}, sub: map[string]chan cdpMsg{}}
	go c.read()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.call(ctx, "", "Browser.getVersion", nil); err != nil {
		c.close()
		return nil, fmt.Errorf("chromium %s did not answer on its pipe: %v; stderr: %s", path, err, tail(stderr.Bytes()))
	}
	return c, nil
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

func (c *chromium) read() {
	defer close(c.done)
	br := bufio.NewReaderSize(c.out, 1<<20)
	for {
		b, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMsg
		if json.Unmarshal(b[:len(b)-1], &m) != nil {
			continue
		}
		c.mu.Lock()
		var ch chan cdpMsg
		if m.ID != 0 {
			ch = c.res[m.ID]
			delete(c.res, m.ID)
		} else if m.Method != "" {
			k := m.SessionID + " " + m.Method
			ch = c.sub[k]
			delete(c.sub, k)
		}
		c.mu.Unlock()
		if ch != nil {
			ch <- m // buffered
		}
	}
}

// expect registers for the next event method of session sid; receive
// from the channel after the command that causes it.
func (c *chromium) expect(sid, method string) chan cdpMsg {
	ch := make(chan cdpMsg, 1)
	c.mu.Lock()
	c.sub[sid+" "+method] = ch
	c.mu.Unlock()
	return ch
}

func (c *chromium) call(ctx context.Context, sid, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan cdpMsg, 1)
	c.res[id] = ch
	c.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if sid != "" {
		req["sessionId"] = sid
	}
	b, _ := json.Marshal(req)
	c.wmu.Lock()
	_, err := c.in.Write(append(b, 0))
	c.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %d %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: the browser closed its pipe", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *chromium) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.call(ctx, "", "Browser.close", nil)
	c.in.Close()
	exited := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-exited
	}
	c.out.Close()
	<-c.done
	os.RemoveAll(c.dir)
}

// tab is one page in the browser.
type tab struct {
	c   *chromium
	t   *testing.T
	ctx context.Context
	id  string // target
	sid string // session
}

// open loads url in a new tab of the given size and waits for its load
// event (the viewer renders synchronously, before it).
func (c *chromium) open(t *testing.T, url string, width, height int) *tab {
	t.Helper()
	tb := c.newTab(t, width, height)
	tb.navigate(url)
	return tb
}

// newTab opens an empty tab of the given size; it closes with the test.
func (c *chromium) newTab(t *testing.T, width, height int) *tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	res, err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var tg struct{ TargetID string }
	_ = json.Unmarshal(res, &tg)
	res, err = c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tg.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var at struct{ SessionID string }
	_ = json.Unmarshal(res, &at)
	tb := &tab{c: c, t: t, ctx: ctx, id: tg.TargetID, sid: at.SessionID}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_, _ = c.call(cctx, "", "Target.closeTarget", map[string]any{"targetId": tb.id})
	})
	tb.must("Page.enable", nil)
	tb.must("Runtime.enable", nil)
	tb.must("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
	return tb
}

// navigate loads url in the tab and waits for its load event.
func (tb *tab) navigate(url string) {
	tb.t.Helper()
	loaded := tb.c.expect(tb.sid, "Page.loadEventFired")
	tb.must("Page.navigate", map[string]any{"url": url})
	select {
	case <-loaded:
	case <-tb.ctx.Done():
		tb.t.Fatalf("%s: no load event: %v", url, tb.ctx.Err())
	}
}

func (tb *tab) must(method string, params any) json.RawMessage {
	tb.t.Helper()
	res, err := tb.c.call(tb.ctx, tb.sid, method, params)
	if err != nil {
		tb.t.Fatal(err)
	}
	return res
}

// eval runs a JavaScript expression in the page and decodes its value
// (JSON-able) into v; an exception fails the test.
func (tb *tab) eval(expr string, v any) {
	tb.t.Helper()
	res := tb.must("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		tb.t.Fatal(err)
	}
	if r.ExceptionDetails != nil {
		tb.t.Fatalf("%s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if v != nil {
		if err := json.Unmarshal(r.Result.Value, v); err != nil {
			tb.t.Fatalf("%s: value %s: %v", expr, r.Result.Value, err)
		}
	}
}

// screenshot returns a PNG of the whole page.
func (tb *tab) screenshot() []byte {
	tb.t.Helper()
	res := tb.must("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": false})
	var r struct{ Data string }
	_ = json.Unmarshal(res, &r)
	b, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		tb.t.Fatal(err)
	}
	return b
}
