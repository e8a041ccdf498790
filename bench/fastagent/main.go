// Command fastagent is the agent of the memrun scenario (see ../README.md):
// it answers initialize and session/new, and a session/prompt whose text
// says "stream N" with N agent_message_chunk notifications of 6 bytes of
// text each, written as fast as it can through a 1 MB buffer, then the
// response. Standard library only, so its own footprint stays small.
//
// When ACP_MEMRUN_HWM names a file, the agent appends "agent <peak RSS>"
// (its VmHWM, in kB) to it when its input ends: a client's peak as seen by
// wait4 (or /usr/bin/time) is the maximum of the client's and its reaped
// children's, so the harness checks that the figure is not the agent's.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
)

func main() {
	defer reportHWM()
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	re := regexp.MustCompile(`stream (\d+)`)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method == "" {
			continue // a notification or a response: nothing to answer
		}
		reply := func(r string) {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, r)
			out.Flush()
		}
		switch m.Method {
		case "initialize":
			reply(`{"protocolVersion":1,"agentCapabilities":{}}`)
		case "session/new":
			reply(`{"sessionId":"s1"}`)
		case "session/prompt":
			n := 0
			if g := re.FindSubmatch(line); g != nil {
				n, _ = strconv.Atoi(string(g[1]))
			}
			for i := range n {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w%04d "}}}}`+"\n", i%10000)
			}
			reply(`{"stopReason":"end_turn"}`)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", m.ID)
			out.Flush()
		}
	}
}

func reportHWM() {
	path := os.Getenv("ACP_MEMRUN_HWM")
	if path == "" {
		return
	}
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
			fmt.Fprintf(f, "agent %s\n", bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB"))))
			f.Close()
		}
	}
}
