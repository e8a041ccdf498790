package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// envTestAgent makes the test binary, re-executed, the agent of
// TestTextFloorWritesWhatACPWrites.
const envTestAgent = "ACP_BENCH_TEST_AGENT"

// testAgentTexts are the agent message chunks testAgent sends: a plain
// text, one the scanner must unescape, one on a line longer than the
// floor's 64 KiB read buffer.
var testAgentTexts = []string{"plain ", "q\"b\\s\u00e9\t", strings.Repeat("x", 100<<10)}

// testAgent answers initialize, session/new and session/prompt on stdin
// and stdout, the prompt with testAgentTexts in between two updates that
// are not message text (the commands the agent offers, which the acp
// command does not write to stdout).
func testAgent() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	update := func(u any) {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": map[string]any{"sessionId": "s1", "update": u}})
		out.Write(append(line, '\n'))
	}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":1,"agentCapabilities":{}}`
		case "session/new":
			result = `{"sessionId":"s1"}`
		case "session/prompt":
			update(map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}})
			for _, text := range testAgentTexts {
				update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}})
			}
			update(map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}})
			result = `{"stopReason":"end_turn"}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
		out.Flush()
	}
}

// TestTextFloorWritesWhatACPWrites keeps the text floor a floor of the acp
// command's text mode: on a turn of plain, escaped and long texts between
// updates that are not message text, memfloor -text writes to stdout the
// same bytes as the acp command does (and so does at least the work of
// finding and writing them), and the newline floor writes only its count.
func TestTextFloorWritesWhatACPWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the acp command")
	}
	dir := t.TempDir()
	build := func(wd, pkg string) string {
		bin := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = wd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		return bin
	}
	floor, acp := build(".", "./memfloor"), build("..", "./examples/acp")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(argv ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(argv[0], append(argv[1:], "-p", "texts", "--", self)...)
		cmd.Env = append(os.Environ(), envTestAgent+"=1")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", argv, err, e.Bytes())
		}
		return o.String(), e.String()
	}
	want := strings.Join(testAgentTexts, "") + "\n"
	acpOut, _ := run(acp)
	if acpOut != want {
		t.Fatalf("acp wrote …%q, want the texts and a newline, …%q", acpOut[max(0, len(acpOut)-40):], want[len(want)-40:])
	}
	textOut, textErr := run(floor, "-text")
	if textOut != acpOut {
		t.Errorf("the text floor wrote %q…, want acp's %q…", textOut[:min(len(textOut), 40)], acpOut[:40])
	}
	const lines = "8\n" // three answers, five updates
	if textErr != lines {
		t.Errorf("the text floor's stderr = %q, want its count %q", textErr, lines)
	}
	if out, _ := run(floor); out != lines {
		t.Errorf("the newline floor wrote %q, want its count %q", out, lines)
	}
}
