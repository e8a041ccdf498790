package acp

import (
	"context"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Pdeathsig fires when the thread that started the agent exits, and the Go
// runtime retires a thread when a goroutine locked to it exits. An agent
// started from such a goroutine must not die with that thread.
func TestAgentSurvivesRetiredStarterThread(t *testing.T) {
	type result struct {
		c   *Client
		tid int
		err error
	}
	res := make(chan result, 1)
	var r result
	for r.c == nil {
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == os.Getpid() {
				// The runtime never retires the main thread: try another.
				runtime.UnlockOSThread()
				res <- result{}
				return
			}
			// Never unlocked: the thread is retired when this returns.
			c, err := Connect(context.Background(), &CommandTransport{Command: agentCommand("echo")}, nil)
			res <- result{c, syscall.Gettid(), err}
		}()
		if r = <-res; r.err != nil {
			t.Fatal(r.err)
		}
	}
	defer r.c.Close()
	task := fmt.Sprintf("/proc/self/task/%d", r.tid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d was not retired", r.tid)
		}
	}
	if _, err := r.c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"}); err != nil {
		t.Fatalf("the agent died with the thread that started it: %v", err)
	}
}
