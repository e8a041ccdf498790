package main

import (
	"strings"
	"testing"
)

// --protocol: the default offers v1 and the session event says which
// version was negotiated (a new field; the others are unchanged); the demo
// agent speaks what is offered; offering 2 to a v1 agent takes its 1; an
// unknown version is a clear error.
func TestProtocolFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want float64
	}{
		{nil, 1},
		{[]string{"--protocol", "2"}, 2},
		{append([]string{"--protocol", "2"}, agentArgs(t, "sessions")...), 1}, // a v1 acptest agent
	} {
		args := append([]string{"--json", "--cwd", t.TempDir(), "-p", "hello"}, c.args...)
		out, errOut, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d; stderr %s", c.args, code, errOut)
		}
		evs := parseEvents(t, out)
		if evs[0]["event"] != "session" || evs[0]["protocolVersion"] != c.want {
			t.Fatalf("%v: session event %v", c.args, evs[0])
		}
	}
	out, errOut, code := runCLI(t, "", "--json", "--cwd", t.TempDir(), "--protocol", "3", "-p", "hello")
	if code == 0 || !strings.Contains(out+errOut, "unsupported protocol version") {
		t.Fatalf("--protocol 3: exit %d, stdout %s stderr %s", code, out, errOut)
	}
}
