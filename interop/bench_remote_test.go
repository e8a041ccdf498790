package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// BenchmarkTSFlood100k: our client receiving a 100 000-chunk turn from the
// TypeScript SDK's agent (tsagent's `flood`, quiet) over stdio, and from
// the same app behind the SDK's own server over Streamable HTTP and
// WebSocket, in one run. The TypeScript side (one await per update, and
// the server's routing) sets the pace here; the Go-server numbers are in
// the remote package's BenchmarkTurn100kChunks. client-cpu-ns/update is
// this process's CPU over the turns (getrusage, children excluded): what
// our client spends on a message at the pace the server sets.
//
//	go test -run X -bench BenchmarkTSFlood100k -benchtime 3x ./interop
func BenchmarkTSFlood100k(b *testing.B) {
	const n = 100_000
	for _, profile := range []string{"stdio", "http", "ws"} {
		b.Run(profile, func(b *testing.B) {
			tr := floodTransport(profile, func() string { return startTSServerB(b) })
			c, err := acp.Connect(context.Background(), tr, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			floodTurns(b, n, func() (check func()) {
				turn, err := s.Prompt(context.Background(), schema.Text("flood 100000"))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := turn.Wait(); err != nil {
					b.Fatal(err)
				}
				return func() {
					if _, got := turn.Snapshot(); got != n+1 {
						b.Fatalf("folded %d events, want %d", got, n+1)
					}
					turn.Release()
				}
			})
		})
	}
}

// floodTurns runs turn, a turn of n updates, for each of b's iterations,
// and then, untimed, the check it returns; it reports updates/s over the
// turns' wall time and, where the platform gives it,
// client-cpu-ns/update: this process's CPU over the turns (the
// TypeScript side runs in children), what a message costs the client
// whatever pace the server sets.
func floodTurns(b *testing.B, n int, turn func() (check func())) {
	var elapsed, cpu time.Duration
	turns := 0
	for b.Loop() {
		start := time.Now()
		cpu0, _ := proctest.CPU()
		check := turn()
		elapsed += time.Since(start)
		cpu1, _ := proctest.CPU()
		cpu += cpu1 - cpu0
		turns++
		check()
	}
	b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
	if _, ok := proctest.CPU(); ok {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*turns), "client-cpu-ns/update")
	}
}

// floodTransport is the transport of the flood benchmarks' profile: the
// TypeScript agent over stdio, quiet, or the server whose URL start
// returns over http or ws.
func floodTransport(profile string, start func() string) acp.Transport {
	if profile == "stdio" {
		cmd := exec.Command("node", "agent.mjs")
		cmd.Dir = tsagentDir
		cmd.Env = append(os.Environ(), "TSAGENT_QUIET=1")
		return &acp.CommandTransport{Command: cmd}
	}
	u := start()
	if profile == "ws" {
		u = strings.Replace(u, "http://", "ws://", 1)
	}
	tr, _ := remote.New(u, remote.Options{})
	return tr
}

// BenchmarkTSClientFlood100k is BenchmarkTSFlood100k's turn received by the
// TypeScript SDK's own http-client and ws-client (tsagent/client.mjs
// `flood`, timed inside node from the prompt to its answer) from the same
// server, so the two clients can be compared on one server in one run:
//
//	go test -run X -bench 'TSFlood100k|TSClientFlood100k' -benchtime 2x ./interop
func BenchmarkTSClientFlood100k(b *testing.B) {
	const n = 100_000
	node, err := exec.LookPath("node")
	if err != nil {
		b.Fatal(err)
	}
	u := startTSServerB(b)
	for _, profile := range []string{"http", "ws"} {
		b.Run(profile, func(b *testing.B) {
			var elapsed time.Duration
			turns := 0
			for b.Loop() {
				cmd := exec.Command(node, "client.mjs", u, profile, "flood")
				cmd.Dir = tsagentDir
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("client.mjs: %v", err)
				}
				var rep struct {
					OK         bool
					Error      string
					StopReason string
					Updates    int
					NS         int64
				}
				if err := json.Unmarshal(out, &rep); err != nil || !rep.OK || rep.StopReason != "end_turn" {
					b.Fatalf("client.mjs flood: %s (%v)", out, err)
				}
				if rep.Updates < n {
					b.Fatalf("the TS client saw %d updates, want at least %d", rep.Updates, n)
				}
				elapsed += time.Duration(rep.NS)
				turns++
			}
			b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
		})
	}
}
