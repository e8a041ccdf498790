package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/gateway"
	"github.com/acpclient/acp/schema"
)

// envCrashMark names a file: the "crashloop" agent refuses to start when it
// exists, and creates it when it starts.
const envCrashMark = "ACP_TEST_CRASH_MARK"

// The agents of the restart tests run as processes of their own (acptest
// subprocesses), so the command restarts a real process and sees its exit
// status. Each dies, exit status 3, in a turn whose prompt contains "die",
// after one chunk of its answer; a new process knows the session the last
// one created ("sess-1", as acptest numbers them) and resumes or loads it.
var _ = func() bool {
	mortal := func(restore acptest.Restore) func() *acptest.Agent {
		return func() *acptest.Agent {
			return acptest.New(&acptest.Options{
				History:  map[string][]any{"sess-1": nil},
				Restore:  restore,
				OnPrompt: mortalTurn,
			})
		}
	}
	acptest.Register("mortal", mortal(acptest.RestoreBoth))
	acptest.Register("mortal-load", mortal(acptest.RestoreLoadOnly))
	acptest.Register("mortal-none", mortal(acptest.RestoreNone))
	acptest.Register("crashloop", func() *acptest.Agent {
		mark := os.Getenv(envCrashMark)
		if _, err := os.Stat(mark); err == nil {
			fmt.Fprintln(os.Stderr, "crashloop: the install is broken")
			os.Exit(7)
		}
		if err := os.WriteFile(mark, nil, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "crashloop:", err)
			os.Exit(2)
		}
		return acptest.New(&acptest.Options{OnPrompt: mortalTurn})
	})
	return true
}()

func mortalTurn(t *acptest.Turn) (schema.StopReason, error) {
	if strings.Contains(t.PromptText(), "die") {
		t.Say("dying ")
		fmt.Fprintln(os.Stderr, "mortal: killed in a turn")
		os.Exit(3)
	}
	t.Say("ok: " + t.PromptText())
	return schema.StopReasonEndTurn, nil
}

// fastRestarts makes the command's backoff short for the test, so that
// a crash loop spends its budget at once; the budget (5 restarts) is the
// command's.
func fastRestarts(t *testing.T) {
	saved := restartPolicy
	restartPolicy = func() *acp.RestartPolicy {
		p := saved()
		p.MinBackoff, p.MaxBackoff = time.Millisecond, time.Millisecond
		return p
	}
	t.Cleanup(func() { restartPolicy = saved })
}

func eventsOf(evs []event, kind string) []event {
	var out []event
	for _, e := range evs {
		if e["event"] == kind {
			out = append(out, e)
		}
	}
	return out
}

func lastMessage(t *testing.T, end event) string {
	t.Helper()
	msgs := end["state"].(map[string]any)["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)["text"].(string)
}

// With --restart and several -p prompts, the agent dying in the second
// turn is reported (a restart event with its exit status, an error event
// for the turn), and the third prompt runs on the restored session; the
// exit status says a turn failed.
func TestRestartPromptsContinue(t *testing.T) {
	for _, agent := range []string{"mortal", "mortal-load"} {
		t.Run(agent, func(t *testing.T) {
			args := append([]string{"--json", "--restart", "--cwd", t.TempDir(), "-p", "one", "-p", "die now", "-p", "three"}, agentArgs(t, agent)...)
			out, errOut, code := runCLI(t, "", args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (a turn failed): %s%s", code, out, errOut)
			}
			evs := parseEvents(t, out)
			ks := strings.Join(kinds(evs), " ")
			ends := eventsOf(evs, "turn_end")
			if len(ends) != 2 || lastMessage(t, ends[0]) != "ok: one" || lastMessage(t, ends[1]) != "ok: three" {
				t.Fatalf("turn_end events %v; events %s", ends, ks)
			}
			errs := eventsOf(evs, "error")
			if len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), "agent restarted") {
				t.Fatalf("error events %v; events %s", errs, ks)
			}
			var phases []string
			for _, r := range eventsOf(evs, "restart") {
				phases = append(phases, r["phase"].(string))
			}
			if strings.Join(phases, " ") != "died restored" {
				t.Fatalf("restart phases %v; events %s", phases, ks)
			}
			rs := eventsOf(evs, "restart")
			died, restored := rs[0], rs[1]
			if died["exitStatus"] != "exit status 3" || died["exitCode"] != float64(3) || died["connection"] != float64(1) ||
				!strings.Contains(died["stderrTail"].(string), "mortal: killed in a turn") {
				t.Errorf("died event %v", died)
			}
			sid := evs[0]["sessionId"]
			if got := restored["restored"].([]any); len(got) != 1 || got[0] != sid || len(restored["lost"].([]any)) != 0 || restored["connection"] != float64(2) {
				t.Errorf("restored event %v, session %v", restored, sid)
			}
			// Order: the death is reported, then the turn's error, then
			// the next turn ends (the restore is reported by then).
			if i, j, k := strings.Index(ks, "error"), strings.Index(ks, "restart"), strings.LastIndex(ks, "turn_end"); i < 0 || j < 0 || j > i || k < i || k < strings.LastIndex(ks, "restart") {
				t.Errorf("events out of order: %s", ks)
			}
			// The third turn's state is the restored session's: its
			// messages include what the first turn said.
			var texts []string
			for _, m := range ends[1]["state"].(map[string]any)["messages"].([]any) {
				texts = append(texts, m.(map[string]any)["text"].(string))
			}
			if got := strings.Join(texts, "|"); !strings.Contains(got, "ok: three") {
				t.Errorf("third turn's messages %q", got)
			}
		})
	}
}

// Text mode: a line on stderr says the agent died, with its exit status,
// and another that it is back; the next turn prints its answer.
func TestRestartPromptsText(t *testing.T) {
	args := append([]string{"--restart", "--cwd", t.TempDir(), "-p", "die", "-p", "two"}, agentArgs(t, "mortal")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	last := -1
	for _, want := range []string{"acp: the agent died (exit status 3); restarting it", "mortal: killed in a turn", "acp: session/prompt: the agent restarted"} {
		i := strings.Index(errOut, want)
		if i < last {
			t.Errorf("stderr lacks %q after the line before:\n%s", want, errOut)
		}
		last = i
	}
	if !strings.Contains(errOut, "acp: the agent is back (connection 2); restored session sess-1") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "ok: two") {
		t.Errorf("stdout %q", out)
	}
}

// Without --restart, -p prompts keep their old contract: the agent's death
// ends the command at once with its exit status.
func TestRestartOffByDefaultWithPrompts(t *testing.T) {
	for _, flag := range [][]string{nil, {"--restart=false"}} {
		args := append(append([]string{"--json", "--cwd", t.TempDir()}, flag...), "-p", "die", "-p", "two")
		args = append(args, agentArgs(t, "mortal")...)
		out, errOut, code := runCLI(t, "", args...)
		evs := parseEvents(t, out)
		if code != 1 || len(eventsOf(evs, "restart")) != 0 || len(eventsOf(evs, "turn_end")) != 0 {
			t.Fatalf("%v: exit %d, events %v: %s", flag, code, kinds(evs), errOut)
		}
		if last := evs[len(evs)-1]; last["event"] != "error" || !strings.Contains(last["message"].(string), "exit status 3") {
			t.Errorf("%v: last event %v", flag, last)
		}
	}
}

// Interactive mode restarts by default: the prompt comes back after the
// death, and the next line runs on the restored session.
func TestRestartInteractiveByDefault(t *testing.T) {
	args := append([]string{"--json", "--cwd", t.TempDir()}, agentArgs(t, "mortal")...)
	out, errOut, code := runCLI(t, "first\nplease die\nagain\n", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	evs := parseEvents(t, out)
	ends := eventsOf(evs, "turn_end")
	if len(ends) != 2 || lastMessage(t, ends[1]) != "ok: again" {
		t.Fatalf("turn_end events %v; events %v", ends, kinds(evs))
	}
	if n := len(eventsOf(evs, "error")); n != 1 {
		t.Errorf("%d error events; events %v", n, kinds(evs))
	}
	if n := len(eventsOf(evs, "restart")); n != 2 {
		t.Errorf("%d restart events; events %v", n, kinds(evs))
	}
	// --restart=false: the death ends the session, as before.
	args = append([]string{"--json", "--restart=false", "--cwd", t.TempDir()}, agentArgs(t, "mortal")...)
	out, _, code = runCLI(t, "first\nplease die\nagain\n", args...)
	evs = parseEvents(t, out)
	if code != 1 || len(eventsOf(evs, "turn_end")) != 1 || len(eventsOf(evs, "restart")) != 0 {
		t.Errorf("--restart=false: exit %d, events %v\n%s", code, kinds(evs), out)
	}
}

// An agent that cannot bring the session back (neither resume nor load)
// ends the command with an error naming the session, interactively and
// with -p prompts.
func TestRestartSessionLost(t *testing.T) {
	t.Run("prompts", func(t *testing.T) {
		args := append([]string{"--json", "--restart", "--cwd", t.TempDir(), "-p", "die", "-p", "two"}, agentArgs(t, "mortal-none")...)
		out, errOut, code := runCLI(t, "", args...)
		checkLost(t, out, errOut, code)
	})
	t.Run("interactive", func(t *testing.T) {
		args := append([]string{"--json", "--cwd", t.TempDir()}, agentArgs(t, "mortal-none")...)
		// The session is lost while the prompt waits for the next line:
		// the command ends then, without it.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			w.WriteString("die\n")
			// no more input: the command must end by itself
		}()
		defer w.Close()
		var outb, errb strings.Builder
		code := run(args, r, &outb, &errb)
		checkLost(t, outb.String(), errb.String(), code)
	})
}

func checkLost(t *testing.T, out, errOut string, code int) {
	t.Helper()
	evs := parseEvents(t, out)
	if code != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	last := evs[len(evs)-1]
	msg, _ := last["message"].(string)
	if last["event"] != "error" || !strings.Contains(msg, "sess-1") || !strings.Contains(msg, "lost") {
		t.Fatalf("last event %v; events %v", last, kinds(evs))
	}
	rs := eventsOf(evs, "restart")
	if len(rs) < 2 || rs[1]["phase"] != "restored" || len(rs[1]["lost"].([]any)) != 1 {
		t.Errorf("restart events %v", rs)
	}
	if n := len(eventsOf(evs, "turn_end")); n != 0 {
		t.Errorf("%d turn_end events", n)
	}
}

// An agent that dies at every start after its first: the command restarts
// it until the budget (5 restarts within a minute) is spent, then ends
// with an error naming the last exit status and the agent's stderr tail.
func TestRestartBudgetSpent(t *testing.T) {
	fastRestarts(t)
	t.Setenv(envCrashMark, filepath.Join(t.TempDir(), "started"))
	for _, json := range []bool{true, false} {
		os.Remove(os.Getenv(envCrashMark))
		args := []string{"--restart", "--cwd", t.TempDir(), "-p", "die", "-p", "two"}
		if json {
			args = append([]string{"--json"}, args...)
		}
		out, errOut, code := runCLI(t, "", append(args, agentArgs(t, "crashloop")...)...)
		if code != 1 {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		final := errOut
		if json {
			evs := parseEvents(t, out)
			var failed int
			for _, r := range eventsOf(evs, "restart") {
				if r["phase"] == "failed" {
					failed++
					if r["exitStatus"] != "exit status 7" {
						t.Errorf("failed restart %v", r)
					}
				}
			}
			if failed != 5 {
				t.Errorf("%d failed restarts, want 5; events %v", failed, kinds(evs))
			}
			if rs := eventsOf(evs, "restart"); rs[len(rs)-1]["phase"] != "gave_up" {
				t.Errorf("last restart event %v", rs[len(rs)-1])
			}
			last := evs[len(evs)-1]
			if last["event"] != "error" {
				t.Fatalf("last event %v\n%s", last, out)
			}
			final = last["message"].(string)
		}
		for _, want := range []string{"too often", "exit status 7", "crashloop: the install is broken"} {
			if !strings.Contains(final, want) {
				t.Errorf("json=%v: the final error lacks %q:\n%s", json, want, final)
			}
		}
		if !json && strings.Count(errOut, "restart attempt") != 5 {
			t.Errorf("stderr:\n%s", errOut)
		}
	}
}

// The usage names the flag and its two defaults.
func TestRestartUsage(t *testing.T) {
	_, errOut, _ := runCLI(t, "", "-h")
	if !strings.Contains(errOut, "-restart") || !strings.Contains(errOut, "default: on interactively, off with -p prompts") {
		t.Errorf("usage:\n%s", errOut)
	}
}

// --url: the agent behind a gateway dies in a turn; the command, with
// --restart, connects again (a new agent process behind a new gateway
// connection), resumes the session and runs the next prompt, over
// Streamable HTTP and WebSocket. A remote death has no exit status: the
// died event says how the connection ended.
func TestRestartRemote(t *testing.T) {
	cmdArgs := agentArgs(t, "mortal")[1:]
	agents := &gateway.CommandAgent{Command: func(ctx context.Context) (*exec.Cmd, error) {
		cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
		return cmd, nil
	}, ShutdownGrace: time.Second}
	gw := gateway.New(agents.Dial, nil)
	srv := httptest.NewServer(gw)
	t.Cleanup(func() {
		gw.Shutdown(context.Background())
		srv.Close()
	})
	for _, url := range []string{srv.URL, "ws" + strings.TrimPrefix(srv.URL, "http")} {
		t.Run(url[:strings.Index(url, ":")], func(t *testing.T) {
			out, errOut, code := runCLI(t, "", "--json", "--restart", "--url", url, "--cwd", t.TempDir(), "-p", "one", "-p", "die", "-p", "three")
			if code != 1 {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			evs := parseEvents(t, out)
			ends := eventsOf(evs, "turn_end")
			if len(ends) != 2 || lastMessage(t, ends[1]) != "ok: three" {
				t.Fatalf("turn_end events %v; events %v", ends, kinds(evs))
			}
			rs := eventsOf(evs, "restart")
			if len(rs) != 2 || rs[0]["phase"] != "died" || rs[1]["phase"] != "restored" || len(rs[1]["restored"].([]any)) != 1 {
				t.Fatalf("restart events %v", rs)
			}
			if _, ok := rs[0]["exitStatus"]; ok {
				t.Errorf("a remote death with an exit status: %v", rs[0])
			}
			if n := len(eventsOf(evs, "error")); n != 1 {
				t.Errorf("%d error events; events %v", n, kinds(evs))
			}
		})
	}
}
