// Command demoagent serves the SDK's demo ACP agent over stdin/stdout, so
// that clients and examples can be tried offline:
//
//	go run ./examples/demoagent
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/acpclient/acp/examples/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := demo.Agent()
	defer a.Close()
	if err := a.Serve(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "demoagent:", err)
		os.Exit(1)
	}
}
