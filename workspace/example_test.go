package workspace_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
)

// FS serves the agent's file requests inside the session's
// directory, and refuses anything outside it.
func ExampleFS() {
	dir, _ := os.MkdirTemp("", "acp-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644)

	agent := acptest.New(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			text, err := t.ReadTextFile(filepath.Join(t.Cwd(), "notes.txt"), 2, 1)
			fmt.Printf("line 2: %q %v\n", text, err)
			_, err = t.ReadTextFile("/etc/passwd", 0, 0)
			fmt.Println("outside:", err != nil)
			err = t.WriteTextFile(filepath.Join(t.Cwd(), "out", "answer.txt"), "42\n")
			fmt.Println("write:", err)
			return "end_turn", nil
		},
	})
	defer agent.Close()
	fromAgent, toAgent := agent.Pipe()
	fsys := &workspace.FS{} // confined to each session's directories
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent},
		&acp.ClientOptions{FS: fsys.Handlers()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
	turn, _ := s.Prompt(ctx, schema.Text("Read my notes"))
	turn.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "out", "answer.txt"))
	fmt.Printf("file: %q\n", b)
	// Output:
	// line 2: "two\n" <nil>
	// outside: true
	// write: <nil>
	// file: "42\n"
}
