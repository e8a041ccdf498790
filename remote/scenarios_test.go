package remote_test

import (
	"errors"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// A permission round: the agent's request arrives on the session's stream
// and the client's answer is posted with that session's Acp-Session-Id (the
// test server refuses it otherwise, failing the turn).
func TestPermissionRound(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			outcome := make(chan schema.PermissionOutcome, 1)
			_, ts := serve(t, &acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
				tn.ToolCall(acptest.ToolCallSpec{ID: "tc1", Title: "edit", Status: schema.ToolCallStatusPending})
				o, err := tn.AskPermission(acptest.ToolCallSpec{ID: "tc1"})
				if err != nil {
					return "", err
				}
				outcome <- o
				tn.UpdateToolCall(acptest.ToolCallSpec{ID: "tc1", Status: schema.ToolCallStatusCompleted})
				return schema.StopReasonEndTurn, nil
			}})
			seen := make(chan string, 1)
			c := connect(t, p.tr(ts.URL, remote.Options{}), &acp.ClientOptions{Permission: func(ctx2 ctxT, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
				seen <- req.ToolCall.ToolCallID
				return acp.AllowAll(ctx2, req)
			}})
			s, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx(t), schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			if id := <-seen; id != "tc1" {
				t.Errorf("permission asked about %q", id)
			}
			if o := <-outcome; o.Kind != schema.OutcomeSelected {
				t.Errorf("the agent got %+v", o)
			}
			tc, _ := turn.ToolCall("tc1")
			if tc.Status != schema.ToolCallStatusCompleted {
				t.Errorf("tool call status %q", tc.Status)
			}
		})
	}
}

// Cancel: session/cancel is posted with the session header and the turn
// ends cancelled when the agent answers.
func TestCancel(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			started := make(chan struct{})
			_, ts := serve(t, &acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
				tn.Say("working")
				close(started)
				<-tn.Cancelled()
				return schema.StopReasonCancelled, nil
			}})
			c := connect(t, p.tr(ts.URL, remote.Options{}), nil)
			s, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx(t), schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			<-started
			turn.Cancel()
			end, err := turn.Wait()
			if err != nil || end != schema.StopReasonCancelled {
				t.Fatalf("turn ended %q, %v", end, err)
			}
		})
	}
}

// Load on a second connection: the session outlives the first (the agent
// keeps it), and session/load opens its stream before the POST. Over
// WebSocket the replay is folded before LoadSession returns; over HTTP it
// may arrive after (see HTTPTransport, Ordering), so the test waits for it.
func TestLoadOnNewConnection(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			_, ts := serve(t, &acptest.Options{History: map[string][]any{
				"old": {acptest.UserMessage("u1", "hello from history"), acptest.AgentMessage("a1", "hi from history")},
			}})
			first := connect(t, p.tr(ts.URL, remote.Options{}), nil)
			first.Close()
			c := connect(t, p.tr(ts.URL, remote.Options{}), nil)
			s, err := c.LoadSession(ctx(t), &schema.LoadSessionRequest{SessionID: "old", Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			has := func() bool {
				h := s.State().History
				for _, m := range h.Messages {
					if m.Text == "hi from history" {
						return true
					}
				}
				return false
			}
			if p.name == "ws" && !has() {
				t.Fatalf("the replay was not folded when LoadSession returned: %+v", s.State().History)
			}
			for range s.Changes(ctx(t)) {
				if has() {
					break
				}
			}
			if !has() {
				t.Fatalf("the replay never arrived: %+v", s.State().History)
			}
		})
	}
}

// Close sends DELETE with the connection's id.
func TestCloseDeletes(t *testing.T) {
	s, ts := serve(t, nil)
	tr := &remote.HTTPTransport{URL: ts.URL}
	c := connect(t, tr, nil)
	if _, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n := s.deletes.Load(); n != 1 {
		t.Fatalf("%d DELETEs, want 1", n)
	}
}

// Cookies the server sets are sent back on every request (sticky
// sessions), and a jar the caller passes keeps them across connections.
// Caller headers go on every request too.
func TestCookiesAndHeaders(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			s, ts := serve(t, nil)
			var mu sync.Mutex
			var refused []string
			s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
				if r.Header.Get("Authorization") != "Bearer T" {
					http.Error(w, "no token", http.StatusUnauthorized)
					return true
				}
				if _, err := r.Cookie("affinity"); err != nil {
					first := r.Method == http.MethodPost && r.Header.Get("Acp-Connection-Id") == "" || // initialize
						r.Method == http.MethodGet && r.Header.Get("Upgrade") != "" // the WebSocket handshake
					if first {
						// The first request of a connection gets the cookie.
						http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "backend-7"})
						return false
					}
					mu.Lock()
					refused = append(refused, r.Method)
					mu.Unlock()
					http.Error(w, "no affinity cookie", http.StatusForbidden)
					return true
				}
				return false
			}
			jar, _ := cookiejar.New(nil)
			o := remote.Options{Header: http.Header{"Authorization": {"Bearer T"}}, Jar: jar}
			c := connect(t, p.tr(ts.URL, o), nil)
			sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := sess.Prompt(ctx(t), schema.Text("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			c.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(refused) > 0 {
				t.Fatalf("requests without the cookie: %v", refused)
			}
			if len(jar.Cookies(mustURL(t, ts.URL))) != 1 {
				t.Fatalf("the caller's jar does not hold the cookie")
			}
			// No token: the connection is refused with the status.
			_, err = acp.Connect(ctx(t), p.tr(ts.URL, remote.Options{}), nil)
			var se *remote.StatusError
			if !errors.As(err, &se) || se.StatusCode != 401 {
				t.Fatalf("without the token: %v, want a 401 StatusError", err)
			}
		})
	}
}

// A message over the client's MaxLineBytes fails only the call it answered,
// as an over-long line does on stdio, also when it is over the transport's
// own buffer bound (then it streams through); one over the transport's
// bound but under the client's is delivered whole.
func TestOverLimitMessages(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			big := strings.Repeat("y", 20<<10)
			_, ts := serve(t, &acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
				if tn.PromptText() == "big" {
					tn.Say(big)
					return schema.StopReasonEndTurn, nil
				}
				tn.OversizedLine(tn.RequestID(), "", 200<<10)
				tn.Hang()
				return "", nil
			}})
			c := connect(t, p.tr(ts.URL, remote.Options{MaxMessageBytes: 4 << 10}), &acp.ClientOptions{Limits: acp.Limits{MaxLineBytes: 100 << 10}})
			s, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx(t), schema.Text("huge"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); !errors.Is(err, acp.ErrLineTooLong) {
				t.Fatalf("turn ended with %v, want ErrLineTooLong", err)
			}
			s2, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatalf("a call after the oversized answer: %v", err)
			}
			turn, err = s2.Prompt(ctx(t), schema.Text("big"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			if m, _ := turn.LastMessage(); m.Text != big {
				t.Fatalf("got %d bytes of text, want %d", len(m.Text), len(big))
			}
		})
	}
}

// Plain http and ws go to loopback only, unless the caller opts in.
func TestInsecureURLRefused(t *testing.T) {
	for _, u := range []string{"http://agents.example.com/acp", "ws://10.0.0.1/acp"} {
		if _, err := remote.New(u, remote.Options{}); !errors.Is(err, remote.ErrInsecureURL) {
			t.Errorf("%s: %v, want ErrInsecureURL", u, err)
		}
		if _, err := remote.New(u, remote.Options{AllowInsecure: true}); err != nil {
			t.Errorf("%s with AllowInsecure: %v", u, err)
		}
	}
	if _, err := (&remote.HTTPTransport{URL: "http://example.com/acp"}).Connect(ctx(t)); !errors.Is(err, remote.ErrInsecureURL) {
		t.Errorf("HTTPTransport: %v", err)
	}
	if _, err := (&remote.WebSocketTransport{URL: "ws://example.com/acp"}).Connect(ctx(t)); !errors.Is(err, remote.ErrInsecureURL) {
		t.Errorf("WebSocketTransport: %v", err)
	}
	for _, u := range []string{"https://example.com/acp", "wss://example.com/acp", "http://127.0.0.1:1/acp", "ws://[::1]:1/acp", "http://localhost/acp"} {
		if _, err := remote.New(u, remote.Options{}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, err := remote.New("ftp://example.com", remote.Options{}); err == nil {
		t.Error("ftp:// accepted")
	}
}
