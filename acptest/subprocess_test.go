package acptest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpclient/acp/schema"
)

func TestMain(m *testing.M) {
	Register("crasher", func() *Agent {
		return New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
			t.Say("about to crash")
			t.Crash()
			return "", nil
		}})
	})
	Register("stubborn", func() *Agent {
		return New(&Options{IgnoreStdinEOF: true, SpawnGrandchild: true})
	})
	Register("args", func() *Agent {
		return New(&Options{AgentInfo: map[string]any{"name": strings.Join(Args(), ","), "version": "1"}})
	})
	MainIfAgent()
	os.Exit(m.Run())
}

// startAgent starts cmd with its stdout on an os.Pipe and its stderr in a
// file, so that exec starts no copying goroutines: the client sees EOF when
// every process holding stdout is gone, and Wait returns when the agent
// exits even if its grandchild lives on.
func startAgent(t *testing.T, cmd *exec.Cmd) (*lineClient, func() string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		pr.Close()
	})
	stderr := func() string {
		b, _ := os.ReadFile(errFile.Name())
		return string(b)
	}
	return newLineClient(t, pr, stdin), stderr
}

func TestSubprocessCrash(t *testing.T) {
	cmd := Command("crasher")
	c, stderr := startAgent(t, cmd)
	c.initialize(nil)
	sid := c.newSession()
	c.request("session/prompt", prompt(sid, "x"))
	if m := c.next(); m.Method != "session/update" {
		t.Fatalf("got %s", m.raw)
	}
	c.expectEOF()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit: %v, want status 3", err)
	}
	if !strings.Contains(stderr(), "acptest: simulated crash") {
		t.Errorf("stderr %q", stderr())
	}
}

func TestSubprocessArgs(t *testing.T) {
	cmd := Command("args", "--acp", "-v")
	c, _ := startAgent(t, cmd)
	var r struct {
		AgentInfo struct{ Name string } `json:"agentInfo"`
		Meta      struct {
			Acptest struct{ Pid int } `json:"acptest"`
		} `json:"_meta"`
	}
	mustUnmarshal(t, c.initialize(nil), &r)
	if r.AgentInfo.Name != "--acp,-v" || r.Meta.Acptest.Pid != cmd.Process.Pid {
		t.Errorf("got %+v", r)
	}
	c.w.Close() // stdin EOF: the agent exits 0
	c.expectEOF()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
}

func TestSubprocessGrandchildAndIgnoredEOF(t *testing.T) {
	cmd := Command("stubborn")
	c, stderr := startAgent(t, cmd)
	var r struct {
		Meta struct {
			Acptest struct{ GrandchildPid int } `json:"acptest"`
		} `json:"_meta"`
	}
	mustUnmarshal(t, c.initialize(nil), &r)
	gpid := r.Meta.Acptest.GrandchildPid
	if gpid == 0 {
		t.Fatalf("no grandchild pid; stderr %q", stderr())
	}
	t.Cleanup(func() { sigkill(gpid) })

	waited := make(chan error, 1)
	c.w.Close()
	go func() { waited <- cmd.Wait() }()
	// The agent ignores stdin EOF: it is still there to be killed.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("agent gone after stdin EOF: %v", err)
	}
	if err := <-waited; err == nil {
		t.Error("agent exited cleanly, want killed by SIGTERM")
	}
	// The grandchild outlives it and still holds stdout open.
	if !exists(gpid) {
		t.Fatal("grandchild gone")
	}
	sigkill(gpid)
	c.expectEOF()
}
