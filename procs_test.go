package acp

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Process helpers for the lifecycle tests; Linux only in effect (/proc), as
// are the tests that use them. Package workspace has its own copy.

// procState returns the state letter and process group of pid from
// /proc, or ok false if there is no such process.
func procState(pid int) (state byte, pgrp int, ok bool) {
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

// alive reports whether pid runs; a zombie has ended (if nothing reaps
// orphans in a container, they stay zombies).
func alive(pid int) bool {
	state, _, ok := procState(pid)
	return ok && state != 'Z' && state != 'X'
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := procState(pid); ok && pgrp == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGroupGone polls until the group has no live member. Polling is the
// only option: nothing signals the death of a process we are not the parent
// of.
func waitGroupGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		left = append(left, groupMembers(pgid)...)
		for _, p := range pids {
			if alive(p) {
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
