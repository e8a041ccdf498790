// Command demoagent serves the SDK's demo ACP agent (package
// github.com/acpclient/acp/acptest/demo) over stdin/stdout, so that
// clients and examples can be tried offline:
//
//	go run ./examples/demoagent                                   # in this module
//	go run github.com/acpclient/acp/examples/demoagent@latest     # from any module
//
// It speaks ACP v1 and v2, whichever the client offers. Its sessions are
// kept in --state-dir (default: acp-demo under the user cache directory;
// --state-dir= keeps them in memory), so that a restarted demoagent lists,
// loads and resumes them. /kill kills the process mid-turn (SIGKILL), to
// try a client's restart. Logs go to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/acpclient/acp/acptest/demo"
)

func main() {
	def, err := demo.DefaultStateDir()
	if err != nil {
		def = ""
	}
	dir := flag.String("state-dir", def, "keep sessions in this directory (empty: in memory only)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: demoagent [--state-dir DIR]\n\nServes the ACP demo agent on stdin/stdout.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, "demoagent: the state directory:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := demo.New(&demo.Options{StateDir: *dir, OwnProcess: true, Stderr: os.Stderr})
	defer a.Close()
	if err := a.Serve(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "demoagent:", err)
		os.Exit(1)
	}
}
