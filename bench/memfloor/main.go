// Command memfloor is the newline floor of the memrun scenario (see
// ../README.md): the least a client can do with a turn. It spawns the
// agent given after --, sends initialize, session/new and one
// session/prompt, and then only counts the lines it reads until the
// prompt's response (id 3), without decoding them, and prints the count.
// Its peak RSS is what a Go process reading the same pipe costs before any
// ACP work; its pipe is the acp command's, 1 MiB on Linux. With
// ACP_MEMRUN_HWM set it appends "self <VmHWM kB>" to that file at exit.
//
//	memfloor -p 'stream 100000' -- AGENT [ARGS...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	prompt := flag.String("p", "stream 100000", "the prompt's text")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: memfloor [-p TEXT] -- AGENT [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	// The same pipe as the acp command asks for its agent's output
	// (acp.CommandTransport.PipeBytes), so that the floor is what a client
	// reading the same pipe costs.
	growPipe(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	text, _ := json.Marshal(*prompt)
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`+"\n")
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":%s}]}}`+"\n", text)
	// The agent answers in order and names its session "s1"; a floor that
	// waited for each response before the next request would measure the
	// same bytes.
	in := bufio.NewReaderSize(stdout, 64<<10)
	lines := 0
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue // a line longer than the buffer: keep reading it
		}
		if err != nil {
			fatal(fmt.Errorf("after %d lines: %w", lines, err))
		}
		lines++
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":3,`)) {
			break
		}
	}
	stdin.Close()
	cmd.Wait()
	fmt.Println(lines)
	if path := os.Getenv("ACP_MEMRUN_HWM"); path != "" {
		reportHWM(path)
	}
}

// reportHWM appends "self <VmHWM kB>" to path: the floor's own peak RSS.
// wait4 (and /usr/bin/time) report the maximum of a process's and its
// reaped children's peaks, and the agent's is above the floor's.
func reportHWM(path string) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return
			}
			fmt.Fprintf(f, "self %s\n", bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB"))))
			f.Close()
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "memfloor:", err)
	os.Exit(1)
}
