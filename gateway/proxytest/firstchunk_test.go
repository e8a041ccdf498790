//go:build unix

package proxytest

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// The time from a prompt to its first chunk, direct and through each
// proxy, over each profile, measured interleaved (each round runs one turn
// on every endpoint, in a rotating order, so that the load of a shared
// machine falls on all of them alike) and reported as medians and ratios
// to direct TLS (go test -v; the figures mean little under -race).
//
// What is asserted is a count, not a time: the upstream connections the
// turns opened. A turn over Streamable HTTP is one POST; a proxy that does
// not keep its connections to the backends alive opens a TCP connection
// for each, and that connection's setup is most of what the proxy adds to
// the first chunk. Through the published files, once warm, no turn opens
// one. The same files with upstream keep-alive off (nginx without
// keepalive, HAProxy with "option http-server-close") run alongside, as a control:
// there every turn over Streamable HTTP opens one, so the count sees what
// it is meant to, and the log shows what keep-alive saves.
// ACP_PROXYTEST_ROUNDS sets the rounds (default 20).
func TestFirstChunk(t *testing.T) {
	rounds := 20
	if v := os.Getenv("ACP_PROXYTEST_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ACP_PROXYTEST_ROUNDS=%q", v)
		}
		rounds = n
	}
	c := newCert(t)
	a, b := startBackend(t, "a"), startBackend(t, "b")
	type endpoint struct {
		name      string
		addr      string
		keepAlive bool // false: the control, keep-alive to the backends off
	}
	endpoints := []endpoint{{"direct", a.serveTLS(t, c), true}}
	variants := []struct {
		name, tool string
		keepAlive  bool
		start      func(*testing.T) *proxy
	}{
		{"nginx", "nginx", true, func(t *testing.T) *proxy { return startNginx(t, c, a, b) }},
		{"haproxy", "haproxy", true, func(t *testing.T) *proxy { return startHAProxy(t, c, a, b) }},
		{"nginx/no-keepalive", "nginx", false, func(t *testing.T) *proxy {
			return startNginxWith(t, c, a, b, "", "", "        keepalive 32;\n", "")
		}},
		{"haproxy/server-close", "haproxy", false, func(t *testing.T) *proxy {
			return startHAProxyWith(t, c, a, b, "", "    option http-keep-alive\n", "    option http-server-close\n")
		}},
	}
	for _, v := range variants {
		if p, ok := tryStart(t, v.tool, v.start); ok {
			endpoints = append(endpoints, endpoint{v.name, p.addr, v.keepAlive})
		}
	}
	opened := func() int { return a.acpConns.count() + b.acpConns.count() }
	for _, profile := range profiles {
		sessions := make([]*acp.Session, len(endpoints))
		for i, ep := range endpoints {
			s := &setup{cert: c, a: a, b: b, proxy: &proxy{addr: ep.addr}}
			cl := connect(t, s.transport(t, profile, newJar(t)), nil)
			sess, err := cl.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			// Warm: the streams are open, and so is every upstream
			// connection a proxy keeps.
			say(t, sess, "warm up")
			say(t, sess, "warm up")
			sessions[i] = sess
		}
		firsts := make([][]time.Duration, len(endpoints))
		conns := make([]int, len(endpoints))
		for r := range rounds {
			for k := range endpoints {
				i := (r + k) % len(endpoints)
				before := opened()
				firsts[i] = append(firsts[i], firstChunk(t, sessions[i]))
				conns[i] += opened() - before
			}
		}
		base := median(firsts[0])
		for i, ep := range endpoints {
			m := median(firsts[i])
			t.Logf("%-20s %-4s first chunk: median %8v (%.2f× direct TLS), min %8v, max %8v over %d turns; %3d new upstream connections",
				ep.name, profile, m.Round(10*time.Microsecond), m.Seconds()/base.Seconds(),
				slices.Min(firsts[i]).Round(10*time.Microsecond), slices.Max(firsts[i]).Round(10*time.Microsecond), rounds, conns[i])
			want := 0
			if !ep.keepAlive && profile == "http" {
				want = rounds // one per POST
			}
			if conns[i] != want {
				t.Errorf("%s %s: %d turns opened %d connections to the backends; want %d", ep.name, profile, rounds, conns[i], want)
			}
		}
	}
}

// firstChunk runs a one-chunk turn and returns the time from the prompt
// to its chunk.
func firstChunk(t *testing.T, sess *acp.Session) time.Duration {
	t.Helper()
	start := time.Now()
	turn, err := sess.Prompt(bounded(t), schema.Text("chunks 1"))
	if err != nil {
		t.Fatal(err)
	}
	var first time.Duration
	for u := range turn.Updates() {
		if _, ok := u.(*schema.AgentMessageChunk); ok && first == 0 {
			first = time.Since(start)
		}
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if first == 0 {
		t.Fatal("the turn had no chunk")
	}
	return first
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
