// Package inittrace measures what a package's initialisation allocates,
// for tests that keep package-level work lazy: every program that links a
// package pays for its init (the acp command links the gateway, the viewer,
// the registry and the checker even for a text turn), so what only some
// callers need is built on first use instead.
package inittrace

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Bytes runs the current test binary again, running no test, with
// GODEBUG=inittrace=1, and returns the heap bytes that the runtime reports
// the initialisation of package pkg (its import path) allocated. The test
// binary's package includes its _test.go files' package-level variables.
// A package the binary does not link reads as 0, as one whose init does
// nothing: name one the test's own package imports.
func Bytes(t testing.TB, pkg string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running %s with inittrace: %v\n%s", os.Args[0], err, stderr.Bytes())
	}
	n, err := parse(stderr.Bytes(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// parse finds pkg's line in inittrace output ("init PKG @T ms, D ms clock,
// N bytes, K allocs") and returns N. A package whose init does nothing has
// no line, and allocates 0; output without the runtime's own line is not
// a trace at all.
func parse(out []byte, pkg string) (int, error) {
	traced := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		switch f[1] {
		case "runtime":
			traced = true
		case pkg:
			return strconv.Atoi(f[7])
		}
	}
	if !traced {
		return 0, fmt.Errorf("inittrace: no init trace in the output:\n%s", out)
	}
	return 0, nil
}
