package main

// The built-in demo agent: the acp binary re-executed with ACP_DEMO_AGENT
// set serves the demo (package acptest/demo) on stdin/stdout, as a real
// subprocess with a pid, so that --restart and `kill -9` work on it as on
// any agent. Its sessions are kept in --demo-state-dir.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/acpclient/acp/acptest/demo"
)

// demoStateEnv carries --demo-state-dir to the demo's process, and is the
// flag's default when set ("" keeps the sessions in memory).
const demoStateEnv = "ACP_DEMO_STATE_DIR"

// registerDemoFlag adds --demo-state-dir.
func registerDemoFlag(fs *flag.FlagSet, cfg *config) {
	def, ok := os.LookupEnv(demoStateEnv)
	if !ok {
		def, _ = demo.DefaultStateDir()
	}
	fs.StringVar(&cfg.demoStateDir, "demo-state-dir", def, "the built-in demo agent keeps its sessions here, so that a restarted demo resumes them (--demo-state-dir= keeps them in memory; env "+demoStateEnv+")")
}

// serveDemo is the demo agent's process: it serves stdin/stdout until EOF.
func serveDemo() {
	dir, ok := os.LookupEnv(demoStateEnv)
	if !ok {
		dir, _ = demo.DefaultStateDir()
	}
	a := demo.New(&demo.Options{StateDir: dir, OwnProcess: true, Stderr: os.Stderr})
	if err := a.Serve(context.Background(), os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "demo agent:", err)
		os.Exit(1)
	}
}
