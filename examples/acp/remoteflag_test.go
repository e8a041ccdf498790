package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest/demo"
	"github.com/coder/websocket"
)

// wsDemo serves the demo agent over WebSocket (the RFD's profile: one
// message per text frame), checking a bearer token.
func wsDemo(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer T" {
			http.Error(w, "token required", http.StatusUnauthorized)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() { demo.New(nil).Serve(ctx, inR, outW); outW.Close() }()
		go func() {
			br := bufio.NewReader(outR)
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					return
				}
				if ws.Write(ctx, websocket.MessageText, bytes.TrimSpace(line)) != nil {
					return
				}
			}
		}()
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				inW.Close()
				outR.Close()
				return
			}
			inW.Write(append(b, '\n'))
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestURLAgainstWebSocket(t *testing.T) {
	ts := wsDemo(t)
	u := strings.Replace(ts.URL, "http://", "ws://", 1)
	out, errOut, code := runCLI(t, "", "--json", "-p", "hello", "--url", u, "--header", "Authorization: Bearer T")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	if k := kinds(evs); len(k) < 2 || k[0] != "session" || k[len(k)-1] != "turn_end" {
		t.Fatalf("events %v", k)
	}

	// Without the token: the status, exit 1.
	out, _, code = runCLI(t, "", "--json", "-p", "hello", "--url", u)
	if code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("without the token: exit %d, %s", code, out)
	}
}

func TestURLFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--header", "A: b"}, "--header needs --url"},
		{[]string{"--allow-insecure"}, "--allow-insecure needs --url"},
		{[]string{"--url", "wss://h/acp", "--", "agent"}, "exclude each other"},
		{[]string{"--url", "wss://h/acp", "--agent", "x"}, "excludes --agent"},
		{[]string{"--url", "wss://h/acp", "--header", "no colon"}, "'Name: value'"},
		{[]string{"--url", "wss://h/acp", "--header", ": empty"}, "'Name: value'"},
		{[]string{"--url", "http://example.com/acp"}, "insecure URL"},
		{[]string{"--url", "ftp://example.com/acp"}, "want an https://"},
	} {
		_, errOut, code := runCLI(t, "", append([]string{"-p", "x"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// --allow-insecure lifts the loopback rule (the connection then fails:
	// the .invalid name never resolves).
	_, errOut, code := runCLI(t, "", "-p", "x", "--url", "http://acp.invalid/acp", "--allow-insecure", "--header", "X: y")
	if code == 2 {
		t.Errorf("--allow-insecure: bad flags: %s", errOut)
	}
}

// --url keeps one cookie jar across the transport's connections: the
// reconnects of --restart carry the load balancer's affinity cookie back
// (with a jar per connection, HAProxy sends each to the next backend).
func TestURLKeepsCookiesAcrossReconnects(t *testing.T) {
	cookies := make(chan string, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cookies <- r.Header.Get("Cookie")
		http.SetCookie(w, &http.Cookie{Name: "ACP_BACKEND", Value: "a", Path: "/"})
		http.Error(w, "refused, as a backend going down would", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	r := &remoteFlags{url: "ws" + strings.TrimPrefix(ts.URL, "http") + "/acp"}
	tr, err := r.transport()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if c, err := tr.Connect(context.Background()); err == nil {
			c.Close()
			t.Fatal("connected to a server that refuses")
		}
	}
	if first, second := <-cookies, <-cookies; first != "" || second != "ACP_BACKEND=a" {
		t.Fatalf("Cookie headers %q then %q; want none, then the affinity cookie the first answer set", first, second)
	}
}
