package main

import (
	"strings"
	"testing"
)

// Off loopback, `acp serve` refuses to start without a token (exit 2).
func TestServeNeedsTokenOffLoopback(t *testing.T) {
	t.Setenv(tokenEnv, "")
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		_, errOut, code := runCLI(t, "", "serve", "--listen", listen)
		if code != 2 || !strings.Contains(errOut, "a bearer token is required") {
			t.Errorf("--listen %s: exit %d, stderr %q", listen, code, errOut)
		}
	}
}

func TestServeFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--tls-cert", "c.pem"},
		{"serve", "--path", "acp"},
		{"serve", "--list-agents"},
		{"serve", "--agent", "x", "--", "y"},
		{"serve", "--listen", "nonsense"},
	} {
		if _, errOut, code := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
