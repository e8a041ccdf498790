package remote_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// profiles runs a test over both profiles.
var profiles = []struct {
	name string
	tr   func(url string, o remote.Options) acp.Transport
}{
	{"http", func(u string, o remote.Options) acp.Transport { return &remote.HTTPTransport{URL: u, Options: o} }},
	{"ws", func(u string, o remote.Options) acp.Transport { return &remote.WebSocketTransport{URL: u, Options: o} }},
}

// serve starts an rfdServer in front of a new acptest agent.
func serve(t *testing.T, opts *acptest.Options) (*rfdServer, *httptest.Server) {
	t.Helper()
	a := acptest.New(opts)
	s := newRFDServer(a.Pipe)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		s.Close()
		ts.Close()
		a.Close()
	})
	return s, ts
}

func connect(t *testing.T, tr acp.Transport, opts *acp.ClientOptions) *acp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := acp.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestTextTurn(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			_, ts := serve(t, &acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
				for i := range 100 {
					tn.Say(strings.Repeat("x", i%7) + ".")
				}
				return schema.StopReasonEndTurn, nil
			}})
			c := connect(t, p.tr(ts.URL, remote.Options{}), nil)
			s, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				turn, err := s.Prompt(ctx(t), schema.Text("hi"))
				if err != nil {
					t.Fatal(err)
				}
				end, err := turn.Wait()
				if err != nil {
					t.Fatal(err)
				}
				if end != schema.StopReasonEndTurn {
					t.Fatalf("stop reason %q", end)
				}
				// Every update of the turn is folded when Wait returns.
				m, _ := turn.LastMessage()
				if got := strings.Count(m.Text, "."); got != 100 {
					t.Fatalf("folded %d chunks, want 100", got)
				}
			}
		})
	}
}

type ctxT = context.Context

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
