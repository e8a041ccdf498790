//go:build !linux

package main

import (
	"io"
	"os/exec"
)

// ownPeak is how a measured process's peak RSS was taken; outside Linux
// it is not (no /proc/<pid>/status), and memrun prints the peaks the
// processes report themselves.
type ownPeak struct {
	hwmKB, wait4KB float64
	exact          bool
}

func runOwnPeak(argv, env []string, stdout, stderr io.Writer) (ownPeak, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stdout, stderr
	return ownPeak{}, cmd.Run()
}

func selfVmHWM() float64 { return 0 }
