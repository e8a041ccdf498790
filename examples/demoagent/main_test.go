package main

// Tests of the demoagent program as a process: its state directory, /kill, usage.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"go.uber.org/goleak"
)

// mainEnv makes the test binary run the command itself, so that the
// tests speak to the real program as a process.
const mainEnv = "DEMOAGENT_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func connect(t *testing.T, args ...string) (*acp.Client, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	c, err := acp.Connect(context.Background(), &acp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cmd
}

func echo(t *testing.T, s *acp.Session, text string) {
	t.Helper()
	turn, err := s.Prompt(context.Background(), schema.Text("/echo "+text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestStateDirAcrossProcesses: a session of one demoagent process is
// loaded, with its history, by the next one given the same --state-dir;
// --state-dir= keeps nothing.
func TestStateDirAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, _ := connect(t, "--state-dir", dir)
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, s, "from the first process")
	c.Close()

	c, _ = connect(t, "--state-dir", dir)
	s2, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID(), Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	var replayed string
	for _, u := range s2.State().Outside {
		if m, ok := u.Update.(*schema.AgentMessageChunk); ok {
			replayed += schema.TextOf(m.Content)
		}
	}
	if replayed != "from the first process" {
		t.Errorf("replayed %q", replayed)
	}

	c, _ = connect(t, "--state-dir=")
	if _, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID(), Cwd: dir}); err == nil {
		t.Error("an in-memory demoagent loaded the session of another process")
	}
}

// TestKillDies: /kill ends the process itself mid-turn (SIGKILL, or
// exit status 137 where there is none); the client sees the turn fail
// with the process's death.
func TestKillDies(t *testing.T) {
	c, _ := connect(t, "--state-dir", t.TempDir())
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("/kill"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = turn.Wait()
	var ee *acp.ExitError
	if !errors.As(c.Err(), &ee) && !errors.As(err, &ee) {
		t.Fatalf("turn: %v; client: %v; want the process's exit", err, c.Err())
	}
	if want := map[bool]string{true: "exit status 137", false: "signal: killed"}[runtime.GOOS == "windows"]; ee.Status != want {
		t.Errorf("the process ended with %q, want %q", ee.Status, want)
	}
}

// A bad argument is a usage error, exit 2.
func TestUsage(t *testing.T) {
	cmd := exec.Command(os.Args[0], "extra")
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want 2", err)
	}
}
