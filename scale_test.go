//go:build unix

package acp

import (
	"context"
	"fmt"
	"github.com/acpclient/acp/schema"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// shellAgent is an ACP agent in /bin/sh builtins (the watchdog needs
// /bin/sh anyway): far lighter than this test binary re-executed, which
// under -race costs tens of MB and tens of ms of CPU per agent. A prompt
// is answered with the chunks "0 " to "19 " in order, then end_turn; a
// prompt saying hold gets one chunk and waits for session/cancel.
const shellAgent = `
while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%[,\}]*}
  case "$line" in
  *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}\n' "$id" ;;
  *'"method":"session/new"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1"}}\n' "$id" ;;
  *'"method":"session/prompt"'*)
    case "$line" in
    *'"text":"hold"'*)
      held=$id
      printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"held"}}}}\n' ;;
    *)
      i=0
      while [ $i -lt 20 ]; do
        printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d "}}}}\n' $i
        i=$((i+1))
      done
      printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id" ;;
    esac ;;
  *'"method":"session/cancel"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"cancelled"}}\n' "$held" ;;
  esac
done
`

// Two hundred agents in one process, all at once: each turn's chunks
// arrive in order, a cancelled turn ends cancelled, every agent is gone
// when its Close returns, and nothing is left running after (goleak, in
// TestMain). The host's cost per connected agent is bounded: no OS thread
// of its own (Linux), at most 4 goroutines. 415155e held one thread and 6
// goroutines per agent.
func TestManyAgentsAtOnce(t *testing.T) {
	const n = 200
	ctx := context.Background()
	threads0, goroutines0 := osThreads(t), runtime.NumGoroutine()
	clients := make([]*Client, n)
	sessions := make([]*Session, n)
	cmds := make([]*exec.Cmd, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmds[i] = exec.Command("/bin/sh", "-c", shellAgent)
			c, err := Connect(ctx, &CommandTransport{Command: cmds[i]}, nil)
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
			if sessions[i], err = c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp"}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	threads, goroutines := osThreads(t)-threads0, runtime.NumGoroutine()-goroutines0
	t.Logf("%d connected agents: +%d threads, +%d goroutines", n, threads, goroutines)
	if threads0 > 0 && threads > n/10 {
		t.Errorf("%d connected agents hold %d more OS threads, want at most %d", n, threads, n/10)
	}
	if goroutines > 4*n+10 {
		t.Errorf("%d connected agents hold %d more goroutines, want at most %d", n, goroutines, 4*n+10)
	}

	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&want, "%d ", i)
	}
	for i, s := range sessions {
		wg.Go(func() {
			if i%2 == 1 { // a held turn, cancelled once its chunk is in
				turn, err := s.Prompt(ctx, schema.Text("hold"))
				if err != nil {
					errs <- err
					return
				}
				for range turn.Updates() {
					break
				}
				turn.Cancel()
				if stop, err := turn.Wait(); stop != schema.StopReasonCancelled || err != nil {
					errs <- fmt.Errorf("agent %d: cancelled turn ended %q, %v", i, stop, err)
				}
				return
			}
			turn, err := s.Prompt(ctx, schema.Text("go"))
			if err != nil {
				errs <- err
				return
			}
			if stop, err := turn.Wait(); stop != schema.StopReasonEndTurn || err != nil {
				errs <- fmt.Errorf("agent %d: turn ended %q, %v", i, stop, err)
				return
			}
			if m, _ := turn.LastMessage(); m.Text != want.String() {
				errs <- fmt.Errorf("agent %d: message %q, want %q", i, m.Text, want.String())
			}
		})
	}
	wg.Wait()
	for i, c := range clients {
		wg.Go(func() {
			c.Close()
			if cmds[i].ProcessState == nil {
				errs <- fmt.Errorf("agent %d: Close returned before the agent was reaped", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
