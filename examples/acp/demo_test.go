package main

// Tests of the built-in demo agent through the real command: v1 and v2,
// sessions kept across runs, and the killed agent the command restarts.

import (
	"regexp"
	"strings"
	"testing"
)

// stateDir gives the built-in demo of one test a state directory of its
// own.
func stateDir(t *testing.T) []string { return []string{"--demo-state-dir", t.TempDir()} }

// TestDemoSpeaksBothVersions: the built-in demo negotiates what --protocol
// offers, end to end: a full turn (permission, tool calls, plan, answer,
// title, usage) in each, and text mode says which version it is.
func TestDemoSpeaksBothVersions(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		args := append(stateDir(t), "--cwd", t.TempDir(), "--protocol", v, "-p", "hello")
		out, errOut, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("v%s: exit %d: %s%s", v, code, out, errOut)
		}
		if !regexp.MustCompile(`(?m)^acp: ACP demo agent \(pid \d+\), ACP v` + v + `, session demo-[0-9a-f]{16}$`).MatchString(errOut) {
			t.Errorf("v%s: no agent line with pid, version and session:\n%s", v, errOut)
		}
		for _, want := range []string{`You said: "hello".`, "[permission] Write acp-demo.txt?: reject", "[tool] Read the workspace: completed",
			"[title] hello\n", "[usage] 1005 of 200000 tokens\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("v%s: stdout lacks %q:\n%s", v, want, out)
			}
		}
	}
}

// TestDemoSessionsAcrossRuns: a session of one run is listed by the next
// (with its title) and continued with --session.
func TestDemoSessionsAcrossRuns(t *testing.T) {
	state, cwd := stateDir(t), t.TempDir()
	out, errOut, code := runCLI(t, "", append(state, "--json", "--cwd", cwd, "-p", "/echo first run")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sid := parseEvents(t, out)[0]["sessionId"].(string)
	out, errOut, code = runCLI(t, "", append(state, "--cwd", cwd, "--list")...)
	if code != 0 || !strings.Contains(out, sid) || !strings.Contains(out, "/echo first run") {
		t.Fatalf("--list: exit %d: %s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "", append(state, "--cwd", cwd, "--session", sid, "-p", "/echo second run")...)
	if code != 0 || !strings.Contains(out, "second run") || !strings.Contains(errOut, "session "+sid) {
		t.Fatalf("--session: exit %d: %s%s", code, out, errOut)
	}
	// --demo-state-dir= keeps sessions in memory: a later run knows none.
	out, errOut, code = runCLI(t, "", "--demo-state-dir=", "--json", "--cwd", cwd, "-p", "/echo in memory")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mem := parseEvents(t, out)[0]["sessionId"].(string)
	out, errOut, code = runCLI(t, "", "--demo-state-dir=", "--cwd", cwd, "--session", mem, "-p", "/echo again")
	if code != 1 || !strings.Contains(errOut, "Resource not found: session "+mem) {
		t.Fatalf("--session of an in-memory session: exit %d: %s%s", code, out, errOut)
	}
}

// TestDemoKillRestart is the walk-through of docs/DEMO.md: /kill kills
// the demo's process mid-turn; the command reports the death, restarts
// the demo, resumes the session, and the next prompt is answered in it.
// The exit status is 1: a -p turn was lost.
func TestDemoKillRestart(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		args := append(stateDir(t), "--cwd", t.TempDir(), "--protocol", v, "--restart", "-p", "/kill", "-p", "are you still there?")
		out, errOut, code := runCLI(t, "", args...)
		if code != 1 {
			t.Fatalf("v%s: exit %d, want 1: %s%s", v, code, out, errOut)
		}
		m := regexp.MustCompile(`acp: ACP demo agent \(pid (\d+)\), ACP v` + v + `, session (demo-[0-9a-f]+)\n`).FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("v%s: no agent line:\n%s", v, errOut)
		}
		pid, sid := m[1], m[2]
		back := regexp.MustCompile(`acp: the agent is back \(connection 2, pid (\d+)\); restored session ` + sid + `\n`).FindStringSubmatch(errOut)
		if back == nil || back[1] == pid {
			t.Fatalf("v%s: no restore of %s by a new process (was pid %s):\n%s", v, sid, pid, errOut)
		}
		last := -1
		for _, want := range []string{"acp: the agent died (", "; restarting it", "acp: session/prompt: the agent restarted", "acp: the agent is back", "[end_turn]"} {
			i := strings.Index(errOut, want)
			if i < last {
				t.Errorf("v%s: stderr lacks %q after the line before:\n%s", v, want, errOut)
			}
			last = i
		}
		if !strings.Contains(out, "dying in 1… ") || !strings.Contains(out, `You said: "are you still there?".`) {
			t.Errorf("v%s: stdout:\n%s", v, out)
		}
	}
}

// TestInteractiveHelpShowsAgentCommands: /help lists the client's
// commands and, beside them, the agent's with their descriptions and
// hints; //help reaches the agent's own /help, which acp's shadows.
func TestInteractiveHelpShowsAgentCommands(t *testing.T) {
	out, errOut, code := runCLI(t, "/help\n//help\n", append(stateDir(t), "--cwd", t.TempDir())...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"acp: commands: /mode [ID], /config [ID=VALUE], /help, /quit",
		"acp: agent commands: /help /echo /slow /kill /background\n",
		"acp:   /echo <text to echo>  Repeat the text back\n",
		"acp:   /help  Show what the demo agent can do (type //help: /help is acp's)\n",
		"acp:   /kill  Die mid-turn",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "I am the ACP demo agent.") || strings.Count(errOut, "[end_turn]") != 1 {
		t.Errorf("//help did not run the agent's /help once:\n%s\n%s", out, errOut)
	}
}

// TestDemoJSONSessionPID: --json's session event carries the agent's pid
// (a new field), and a /kill under --restart is a restart event "died"
// then "restored" with the session, then the next turn's turn_end.
func TestDemoJSONSessionPID(t *testing.T) {
	args := append(stateDir(t), "--json", "--cwd", t.TempDir(), "--restart", "-p", "/kill", "-p", "/echo back")
	out, errOut, code := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	evs := parseEvents(t, out)
	if pid, ok := evs[0]["pid"].(float64); evs[0]["event"] != "session" || !ok || pid <= 0 {
		t.Fatalf("session event %v", evs[0])
	}
	var phases []string
	for _, r := range eventsOf(evs, "restart") {
		phases = append(phases, r["phase"].(string))
	}
	ends := eventsOf(evs, "turn_end")
	if strings.Join(phases, " ") != "died restored" || len(ends) != 1 || lastMessage(t, ends[0]) != "back" {
		t.Errorf("restart phases %v, turn_end %v", phases, ends)
	}
	if restored := eventsOf(evs, "restart")[1]["restored"].([]any); len(restored) != 1 || restored[0] != evs[0]["sessionId"] {
		t.Errorf("restored %v, session %v", restored, evs[0]["sessionId"])
	}
}
