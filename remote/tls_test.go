package remote_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// Over TLS, Streamable HTTP speaks HTTP/2 (the RFD requires it; Go
// negotiates it by ALPN) and WebSocket HTTP/1.1 (the upgrade is an
// HTTP/1.1 mechanism), with the caller's TLS config.
func TestTLS(t *testing.T) {
	a := acptest.New(&acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
		tn.Say("secure")
		return schema.StopReasonEndTurn, nil
	}})
	defer a.Close()
	s := newRFDServer(a.Pipe)
	var mu sync.Mutex
	protos := map[string]bool{}
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		protos[r.Method+" "+r.Proto] = true
		mu.Unlock()
		return false
	}
	ts := httptest.NewUnstartedServer(s)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer func() { ts.CloseClientConnections(); s.Close(); ts.Close() }()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	o := remote.Options{TLSConfig: &tls.Config{RootCAs: pool}}
	for _, u := range []string{ts.URL, strings.Replace(ts.URL, "https", "wss", 1)} {
		tr, err := remote.New(u, o)
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, tr, nil)
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
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"POST HTTP/2.0", "GET HTTP/2.0", "DELETE HTTP/2.0", "GET HTTP/1.1"} {
		if !protos[want] {
			t.Errorf("no %s request; saw %v", want, protos)
		}
	}
	// Without the CA the handshake fails.
	if _, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL}, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an unknown CA: %v", err)
	}
	if _, err := remote.New(ts.URL, remote.Options{TLSConfig: o.TLSConfig, HTTPClient: http.DefaultClient}); err != nil {
		t.Fatal(err) // the conflict is reported by Connect
	}
	if _, err := (&remote.HTTPTransport{URL: ts.URL, Options: remote.Options{TLSConfig: o.TLSConfig, HTTPClient: http.DefaultClient}}).Connect(ctx(t)); err == nil {
		t.Error("TLSConfig with HTTPClient accepted")
	}
}
