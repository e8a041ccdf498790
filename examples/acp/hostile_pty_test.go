//go:build linux

package main

import (
	"strings"
	"testing"
)

// The permission dialog on a terminal, for a tool titled to hide
// "rm -rf /" behind "ls -la" and to write the clipboard: the dialog shows
// the title with its escapes visible, and none of the agent's escape
// sequences reaches the terminal raw.
func TestHostilePermissionDialog(t *testing.T) {
	cmd, sc, typ := startPTY(t, append([]string{"--cwd", t.TempDir()}, childAgentArgs(t, "hostile")...)...)
	sc.expect(t, "> ")
	typ("go\r")
	sc.expect(t, "[permission] ask:"+hostileShown)
	sc.expect(t, "  + new:"+hostileShown)
	sc.expect(t, "  1) yes:"+hostileShown+" [allow_once]")
	sc.expect(t, "choose: ")
	typ("2\r")
	sc.expect(t, "[stop:")
	sc.expect(t, "> ")
	typ("/quit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	screen := sc.all()
	for _, raw := range []string{"\x1b]52", "\x1b]0;", "\x1b[Kls -la", "\x1b[2J", "\u009b", "\u202e", "\x7f", "\x00"} {
		if strings.Contains(screen, raw) {
			t.Errorf("%q reached the terminal raw:\n%q", raw, screen)
		}
	}
}
