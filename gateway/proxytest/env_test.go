//go:build unix

package proxytest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/gateway"
	"github.com/acpclient/acp/internal/procgroup"
)

const token = "proxytest-token"

// cert is a generated self-signed certificate for 127.0.0.1, its files,
// and a pool that trusts it.
type cert struct {
	certFile, keyFile, bothFile string // bothFile: certificate then key (HAProxy's crt)
	pool                        *x509.CertPool
}

func newCert(t *testing.T) *cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "proxytest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	dir := t.TempDir()
	c := &cert{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), bothFile: filepath.Join(dir, "both.pem"), pool: x509.NewCertPool()}
	for f, b := range map[string][]byte{c.certFile: certPEM, c.keyFile: keyPEM, c.bothFile: append(append([]byte{}, certPEM...), keyPEM...)} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.pool.AppendCertsFromPEM(certPEM)
	return c
}

func (c *cert) tlsConfig() *tls.Config { return &tls.Config{RootCAs: c.pool} }

// backend is one gateway on loopback, serving the test agent with a token,
// as `acp serve --token` does.
type backend struct {
	name     string
	addr     string
	gw       *gateway.Gateway
	srv      *http.Server
	ln       *trackingListener
	done     chan struct{}
	acpConns connCounter // the connections that carried /acp requests

	killOnce   sync.Once
	agentsDone chan struct{}

	mu     sync.Mutex
	agents []*exec.Cmd
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	return startBackendKeepAlive(t, name, 0)
}

// startBackendKeepAlive is startBackend with the gateway's SSE keep-alive
// interval (0: the default, 15 s).
func startBackendKeepAlive(t *testing.T, name string, keepAlive time.Duration) *backend {
	t.Helper()
	return startBackendAgent(t, name, keepAlive, func() *exec.Cmd { return acptest.Command("proxyagent") })
}

// startBackendAgent is a backend whose agents newAgent starts.
func startBackendAgent(t *testing.T, name string, keepAlive time.Duration, newAgent func() *exec.Cmd) *backend {
	t.Helper()
	return startBackendAt(t, name, "127.0.0.1:0", keepAlive, newAgent)
}

// startBackendAt is startBackendAgent listening on addr ("127.0.0.1:0":
// a free port below the ephemeral range, see listenFixed).
func startBackendAt(t *testing.T, name, addr string, keepAlive time.Duration, newAgent func() *exec.Cmd) *backend {
	t.Helper()
	var ln net.Listener
	var err error
	if addr == "127.0.0.1:0" {
		ln, err = listenFixed()
	} else {
		// The old backend's sockets on the port may take a moment to go
		// (its listener's last accepted connections): bounded retries.
		for i := 0; ; i++ {
			if ln, err = net.Listen("tcp", addr); err == nil || i == 250 || !errors.Is(err, syscall.EADDRINUSE) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, addr: ln.Addr().String(), ln: &trackingListener{Listener: ln}, done: make(chan struct{}), agentsDone: make(chan struct{})}
	agents := &gateway.CommandAgent{Command: func(context.Context) (*exec.Cmd, error) {
		cmd := newAgent()
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, backendEnv+"="+name)
		b.mu.Lock()
		b.agents = append(b.agents, cmd)
		b.mu.Unlock()
		return cmd, nil
	}, ShutdownGrace: time.Second, TerminateGrace: time.Second}
	b.gw = gateway.New(agents.Dial, &gateway.Options{Token: token, KeepAliveInterval: keepAlive, PingInterval: keepAlive})
	mux := http.NewServeMux()
	mux.Handle("/acp", b.acpConns.wrap(b.gw))
	mux.Handle("/healthz", b.gw.Health())
	b.srv = gateway.NewServer(mux)
	b.srv.ConnContext = withConn
	go func() { defer close(b.done); b.srv.Serve(b.ln) }()
	t.Cleanup(func() { b.kill(); <-b.agentsDone })
	return b
}

// serveTLS serves the backend's gateway also with TLS of its own, as
// `acp serve --tls-cert` does: the direct connection the proxies are
// measured against. It returns the host:port.
func (b *backend) serveTLS(t *testing.T, c *cert) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/acp", b.acpConns.wrap(b.gw))
	srv := gateway.NewServer(mux)
	srv.ConnContext = withConn
	done := make(chan struct{})
	go func() { defer close(done); srv.ServeTLS(ln, c.certFile, c.keyFile) }()
	// Before the backend's own cleanup (LIFO): its gateway shuts the
	// streams, and this server's Close ends what is left.
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// lastAgent is the agent process the backend started last.
func (b *backend) lastAgent() *exec.Cmd {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agents[len(b.agents)-1]
}

// kill stops the backend as a crash would, as far as the network sees:
// the listener and every TCP connection (WebSockets included) close at
// once, nothing is answered. Then its agents are shut down, as the death
// of the machine would take them too.
// kill returns once the network side is gone; the agents' shutdown
// (their grace included) goes on, and the test's cleanup waits for it.
func (b *backend) kill() {
	b.killOnce.Do(func() {
		b.ln.kill()
		b.srv.Close()
		<-b.done
		go func() {
			defer close(b.agentsDone)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b.gw.Shutdown(ctx)
		}()
	})
}

// drain stops the backend as acp serve does on SIGTERM: the gateway
// drains (new connections and the health check get 503, the running turns
// finish), then the listener closes and what is left is shut down. It
// returns Drain's error.
func (b *backend) drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := b.gw.Drain(ctx)
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	b.gw.Shutdown(sctx)
	if b.srv.Shutdown(sctx) != nil {
		b.srv.Close()
	}
	<-b.done
	return err
}

// listenFixed listens on a free loopback port below Linux's ephemeral
// range (32768 on): a backend restarted on its port must find it free, and
// a port the kernel picked could meanwhile be the local end of one of the
// proxies' own connections.
func listenFixed() (net.Listener, error) {
	var err error
	for range 100 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+mrand.IntN(12000))); err == nil {
			return ln, nil
		}
	}
	return nil, err
}

// trackingListener remembers every connection it accepted, so that kill
// can close those the http.Server no longer tracks (hijacked WebSockets).
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.killed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns = append(l.conns, c)
	return c, nil
}

func (l *trackingListener) kill() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed = true
	l.Listener.Close()
	// A crash closes every socket at once, in no order; newest first is
	// the order that hurts a client most: its session streams, opened
	// after the connection stream, end before it.
	for i := len(l.conns) - 1; i >= 0; i-- {
		l.conns[i].Close()
	}
}

// needTool finds a proxy's binary. Without it, the test skips, unless
// CI=true: .ci/run installs it, so there a missing proxy is a failure.
func needTool(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range []string{"", "/usr/sbin/", "/sbin/"} {
		if p, err := exec.LookPath(dir + name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (.ci/run installs it: apt-get install nginx-light haproxy)", name)
	}
	t.Skipf("%s is not installed (apt-get install nginx-light haproxy); CI=true fails instead", name)
	return ""
}

// freePort is a loopback port nothing listens on, for a proxy's listener.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// substitute replaces, in a deploy file, each of the strings it names with
// the test's own; each must be there exactly as often as said, so that an
// edit of the file the test no longer understands fails here, loudly.
func substitute(t *testing.T, file string, repl []string, counts []int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(repl); i += 2 {
		if n := strings.Count(s, repl[i]); n != counts[i/2] {
			t.Fatalf("docs/deploy/%s has %q %d times, want %d: update the test with the file", file, repl[i], n, counts[i/2])
		}
		s = strings.ReplaceAll(s, repl[i], repl[i+1])
	}
	return s
}

// substituteText replaces, in a deploy file's text, each string once; each
// must be there exactly once.
func substituteText(t *testing.T, file, s string, repl []string) string {
	t.Helper()
	for i := 0; i < len(repl); i += 2 {
		if n := strings.Count(s, repl[i]); n != 1 {
			t.Fatalf("docs/deploy/%s has %q %d times, want 1: update the test with the file", file, repl[i], n)
		}
		s = strings.Replace(s, repl[i], repl[i+1], 1)
	}
	return s
}

// proxy is a running nginx or HAProxy.
type proxy struct {
	name string
	addr string // host:port of its TLS listener
	cmd  *exec.Cmd
	out  *syncBuffer
}

// startNginx runs docs/deploy/nginx.conf in the foreground, in front of
// the backends a and b, on a loopback port with the test's certificate.
func startNginx(t *testing.T, c *cert, a, b *backend) *proxy {
	return startNginxTimeout(t, c, a, b, "")
}

// startNginxTimeout is startNginx with the read and send timeouts set to
// timeout (nginx syntax, "2s"; "": the file's).
func startNginxTimeout(t *testing.T, c *cert, a, b *backend, timeout string) *proxy {
	return startNginxWith(t, c, a, b, timeout, "")
}

// startNginxWith is startNginxTimeout with the upstreams' fail_timeout set
// to failTimeout ("": the file's), and edits (pairs: a string the file has
// once, its replacement) made to the file.
func startNginxWith(t *testing.T, c *cert, a, b *backend, timeout, failTimeout string, edits ...string) *proxy {
	bin := needTool(t, "nginx")
	dir := t.TempDir()
	addr := freePort(t)
	conf := substitute(t, "nginx.conf", []string{
		"127.0.0.1:8765", a.addr,
		"127.0.0.1:8766", b.addr,
		"listen 443 ", "listen " + addr + " ",
		"/etc/ssl/agents.pem", c.certFile,
		"/etc/ssl/agents.key", c.keyFile,
		// What a packaged nginx keeps under /var: here, in the test's
		// directory, so that it runs as any user.
		"http {\n", "http {\n    access_log off;\n    client_body_temp_path " + dir + "/body;\n    proxy_temp_path " + dir + "/proxy;\n" +
			"    fastcgi_temp_path " + dir + "/fastcgi;\n    uwsgi_temp_path " + dir + "/uwsgi;\n    scgi_temp_path " + dir + "/scgi;\n",
	}, []int{1, 1, 1, 1, 1, 1})
	if timeout != "" {
		conf = substituteText(t, "nginx.conf", conf, []string{
			"proxy_read_timeout 1h;", "proxy_read_timeout " + timeout + ";",
			"proxy_send_timeout 1h;", "proxy_send_timeout " + timeout + ";",
		})
	}
	if failTimeout != "" {
		if n := strings.Count(conf, "fail_timeout=10s"); n != 2 {
			t.Fatalf("docs/deploy/nginx.conf has fail_timeout=10s %d times, want 2: update the test with the file", n)
		}
		conf = strings.ReplaceAll(conf, "fail_timeout=10s", "fail_timeout="+failTimeout)
	}
	conf = substituteText(t, "nginx.conf", conf, edits)
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	global := "daemon off; pid " + dir + "/nginx.pid; error_log stderr notice;"
	if os.Geteuid() == 0 {
		// Workers would run as nobody, who cannot enter the test's
		// directory.
		global += " user root;"
	}
	return startProxy(t, "nginx", addr, exec.Command(bin, "-p", dir, "-c", file, "-g", global))
}

// startHAProxy runs docs/deploy/haproxy.cfg in the foreground, in front of
// the backends a and b.
func startHAProxy(t *testing.T, c *cert, a, b *backend) *proxy {
	return startHAProxyTimeout(t, c, a, b, "")
}

// startHAProxyTimeout is startHAProxy with the client, server and tunnel
// timeouts set to timeout (HAProxy syntax, "2s"; "": the file's).
func startHAProxyTimeout(t *testing.T, c *cert, a, b *backend, timeout string) *proxy {
	return startHAProxyWith(t, c, a, b, timeout)
}

// startHAProxyWith is startHAProxyTimeout with edits (pairs: a string the
// file has once, its replacement) made to the file.
func startHAProxyWith(t *testing.T, c *cert, a, b *backend, timeout string, edits ...string) *proxy {
	bin := needTool(t, "haproxy")
	dir := t.TempDir()
	addr := freePort(t)
	conf := substitute(t, "haproxy.cfg", []string{
		"127.0.0.1:8765", a.addr,
		"127.0.0.1:8766", b.addr,
		"bind :443 ", "bind " + addr + " ",
		"/etc/ssl/agents.pem", c.bothFile,
	}, []int{1, 1, 1, 1})
	if timeout != "" {
		conf = substituteText(t, "haproxy.cfg", conf, []string{
			"timeout client 1m", "timeout client " + timeout,
			"timeout server 1m", "timeout server " + timeout,
			"timeout tunnel 1h", "timeout tunnel " + timeout,
		})
	}
	conf = substituteText(t, "haproxy.cfg", conf, edits)
	file := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProxy(t, "haproxy", addr, exec.Command(bin, "-db", "-f", file))
}

func startProxy(t *testing.T, name, addr string, cmd *exec.Cmd) *proxy {
	t.Helper()
	p := &proxy{name: name, addr: addr, cmd: cmd, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// A process group of its own (nginx's workers with its master), which
	// dies with the test binary even when go test is killed and no
	// Cleanup runs (procgroup: Pdeathsig on Linux, and a watchdog).
	g, err := procgroup.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); g.Reaped(); close(exited) }()
	t.Cleanup(func() {
		g.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			g.Signal(syscall.SIGKILL)
			<-exited
		}
		g.Signal(syscall.SIGKILL) // a worker that outlived its master
		g.Close()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	// A proxy says nothing when it is ready: poll its port, bounded.
	for i := 0; ; i++ {
		select {
		case <-exited:
			t.Fatalf("%s exited at start:\n%s", name, p.out.String())
		default:
		}
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return p
		}
		if i == 500 {
			t.Fatalf("%s not listening on %s after 10 s:\n%s", name, addr, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// url is the proxy's endpoint for a profile: "http" (Streamable HTTP) or
// "ws" (WebSocket), both over TLS.
func (p *proxy) url(profile string) string {
	scheme := "https"
	if profile == "ws" {
		scheme = "wss"
	}
	return fmt.Sprintf("%s://%s/acp", scheme, p.addr)
}
