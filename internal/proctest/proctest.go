// Package proctest reads the process table (/proc) for tests that check no
// process of an agent or a terminal survives. It is Linux-only in effect:
// elsewhere every process reads as gone, and the tests that need it run on
// Linux.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// State returns the state letter and process group of pid from /proc, or
// ok false if there is no such process.
func State(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may contain spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], pgrp, true
}

// Alive reports whether pid runs; a zombie has ended (if nothing reaps
// orphans in a container, they stay zombies).
func Alive(pid int) bool {
	state, _, ok := State(pid)
	return ok && state != 'Z' && state != 'X'
}

// GroupMembers lists the live processes of process group pgid.
func GroupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := State(pid); ok && pgrp == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// WaitGroupGone polls until group pgid and the given pids have no live
// process, failing t after 10 s. Polling is the only option: nothing
// signals the death of a process we are not the parent of.
func WaitGroupGone(t testing.TB, pgid int, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := GroupMembers(pgid)
		for _, p := range pids {
			if Alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still alive: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Describe names the processes pids for a failure message: "pid command
// state", comma-separated; processes gone meanwhile are left out.
func Describe(pids []int) string {
	var out []string
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		f := strings.Fields(s[end+1:])
		if open < 0 || end < open || len(f) == 0 {
			continue
		}
		out = append(out, strconv.Itoa(pid)+" "+s[open+1:end]+" "+f[0])
	}
	return strings.Join(out, ", ")
}

// Threads returns the number of OS threads of this process, from
// /proc/self/status (Linux only: elsewhere it fails the test).
func Threads(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}
