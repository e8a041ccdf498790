// Command memfloor is the newline floor of the memrun scenario (see
// ../README.md): the least a client can do with a turn. It spawns the
// agent given after --, sends initialize, session/new and one
// session/prompt, and then only counts the lines it reads until the
// prompt's response (id 3), without decoding them, and prints the count.
// Its peak RSS is what a Go process reading the same pipe costs before any
// ACP work; its pipe is the acp command's, 1 MiB on Linux. With
// ACP_MEMRUN_HWM set it appends "self <VmHWM kB>" to that file at exit.
//
// With -text it is the text floor instead: the least a client that shows
// the turn can do. It also validates every line with the library's one
// scanner (internal/jsonscan.Peek, which the acp command's reader runs
// too) and writes each agent message chunk's text to stdout through a
// 64 KiB buffer, then a newline, as the acp command's text mode does (the
// same bytes: TestTextFloorWritesWhatACPWrites); it keeps no state, runs
// no other goroutine, and prints its count on stderr.
//
//	memfloor [-text] -p 'stream 100000' -- AGENT [ARGS...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/acpclient/acp/internal/jsonscan"
)

func main() {
	prompt := flag.String("p", "stream 100000", "the prompt's text")
	text := flag.Bool("text", false, "validate each line and write the agent message chunks' text to stdout (the text floor)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: memfloor [-text] [-p TEXT] -- AGENT [ARGS...]")
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
	promptJSON, _ := json.Marshal(*prompt)
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`+"\n")
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":%s}]}}`+"\n", promptJSON)
	// The agent answers in order and names its session "s1"; a floor that
	// waited for each response before the next request would measure the
	// same bytes.
	in := bufio.NewReaderSize(stdout, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	lines := 0
	var long []byte // a line longer than in's buffer, for -text
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if *text {
				long = append(long, line...)
			}
			continue // a line longer than the buffer: keep reading it
		}
		if err != nil {
			fatal(fmt.Errorf("after %d lines: %w", lines, err))
		}
		if len(long) > 0 {
			line, long = append(long, line...), long[:0]
		}
		lines++
		if *text {
			showText(out, line)
		}
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":3,`)) {
			break
		}
	}
	count := os.Stdout
	if *text {
		// The acp command ends its text with a newline and reports the
		// turn on stderr: the text floor's stdout is the same bytes.
		out.WriteByte('\n')
		if err := out.Flush(); err != nil {
			fatal(err)
		}
		count = os.Stderr
	}
	stdin.Close()
	cmd.Wait()
	fmt.Fprintln(count, lines)
	if path := os.Getenv("ACP_MEMRUN_HWM"); path != "" {
		reportHWM(path)
	}
}

// showText validates line and writes its text to out if it is a plain
// agent message chunk (the acp command shows thoughts and the rest in
// forms of its own). A line that is not a JSON object ends the run: the
// acp command would report it, and a floor that skipped it would read
// less.
func showText(out *bufio.Writer, line []byte) {
	e, err := jsonscan.Peek(line)
	if err != nil {
		fatal(fmt.Errorf("line %q…: %w", line[:min(len(line), 60)], err))
	}
	u := &e.Update
	if e.Method != "session/update" || u.Chunk != jsonscan.ChunkMessage {
		return
	}
	if u.TextPlain {
		out.Write(u.Text[1 : len(u.Text)-1])
		return
	}
	var s string
	if err := json.Unmarshal(u.Text, &s); err != nil {
		fatal(err)
	}
	out.WriteString(s)
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
