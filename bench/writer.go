package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// The writer is this binary re-executed as an agent (ACP_BENCH_WRITER set).
// It answers initialize, session/new, session/prompt and session/load, and
// answers a prompt (or a load) by writing its pre-rendered bytes into the
// pipe and then the response. Every client under test reads the very same
// bytes.

const (
	envMode = "ACP_BENCH_WRITER"
	envN    = "ACP_BENCH_N"
	envPer  = "ACP_BENCH_PER"

	// groupSize is the number of updates per prompt in the cut-up modes:
	// below coder/acp-go-sdk's 1024-notification queue.
	groupSize = 1000
)

// writerCmd returns the command that runs this binary as a writer.
func writerCmd(mode string, n int) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envMode+"="+mode, envN+"="+strconv.Itoa(n), envPer+"="+strconv.Itoa(groupSize))
	return cmd
}

// runWriter runs the writer; mode:
//
//	exit:      exits at once (the bare exec baseline)
//	handshake: answers the handshake only
//	turn:      a prompt is answered by n text chunks and n/100 tool calls
//	           (tool_call + tool_call_update each), pre-rendered
//	chunks:    a prompt is answered by n text chunks, pre-rendered
//	burst:     session/load replays n chunks before its response
//	stream:    a prompt is answered by n chunks of 1000 bytes, rendered
//	           on the fly (n=100 000: a 100 MB message)
//	tiny:      a prompt is answered by n chunks of 16 bytes, rendered on
//	           the fly (the many-agents scenario: small agents)
//	turn2:     the turn in ACP v2 form (renderTurnV2): a v2-only agent
//	           that answers an initialize offering 1 with -32022, as the
//	           TypeScript SDK's v2 agent does; a prompt is answered
//	           {messageId} after state_update running and the echoed
//	           user_message, then the same chunks (with messageId) and
//	           tool calls (tool_call_update upserts), then state_update
//	           idle end_turn
//	texts:     a prompt is answered by textsTurn: message chunks of a
//	           plain, an escaped and a 100 KiB text between updates that
//	           are not message text (TestTextFloorWritesWhatACPWrites)
//	turns, streamturns: the bytes of turn or stream, cut into prompts of
//	           ACP_BENCH_PER updates each (one group per prompt, in order):
//	           how coder/acp-go-sdk, which drops the connection when more
//	           than 1024 updates queue up, can be fed the same data
func runWriter(mode string) {
	if mode == "exit" {
		os.Exit(0)
	}
	n, _ := strconv.Atoi(os.Getenv(envN))
	per, _ := strconv.Atoi(os.Getenv(envPer))
	var prompt, load []byte
	var groups [][]byte
	next := 0
	switch mode {
	case "turns":
		groups = splitLines(renderTurn(n, n/100), per)
	case "turn":
		prompt = renderTurn(n, n/100)
	case "turn2":
		prompt = renderTurnV2(n, n/100)
	case "chunks":
		prompt = renderTurn(n, 0)
	case "burst":
		load = renderTurn(n, 0)
	case "texts":
		prompt = renderTexts()
	}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion int `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		if mode == "turn2" {
			writeV2(out, m.ID, m.Method, m.Params.ProtocolVersion, prompt)
			continue
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"authMethods":[]}`)
		case "session/new":
			reply(m.ID, `{"sessionId":"s1"}`)
		case "session/load":
			out.Write(load)
			reply(m.ID, `{}`)
		case "session/prompt":
			switch mode {
			case "stream":
				writeStream(out, 0, n, 1000)
			case "tiny":
				writeStream(out, 0, n, 16)
			case "streamturns":
				writeStream(out, next*per, min(per, n-next*per), 1000)
				next++
			case "turns":
				out.Write(groups[next%len(groups)])
				next++
			default:
				out.Write(prompt)
			}
			reply(m.ID, `{"stopReason":"end_turn"}`)
		default:
			reply(m.ID, `null`)
		}
	}
}

// writeV2 answers one request as the v2 writer.
func writeV2(out *bufio.Writer, id json.RawMessage, method string, version int, prompt []byte) {
	reply := func(result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	}
	defer out.Flush()
	switch method {
	case "initialize":
		if version < 2 {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":%d,"supported":[2]}}}`+"\n", id, version)
			return
		}
		reply(`{"protocolVersion":2,"info":{"name":"acp-bench-writer","version":"0"},"capabilities":{"session":{}},"authMethods":[]}`)
	case "session/new":
		reply(`{"sessionId":"s1"}`)
	case "session/prompt":
		out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"running","background":[]}}}` + "\n")
		out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"go"}]}}}` + "\n")
		reply(`{"messageId":"u1"}`)
		out.Write(prompt)
		out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","background":[],"stopReason":"end_turn"}}}` + "\n")
	default:
		reply(`null`)
	}
}

// renderTurn renders n agent_message_chunk lines with tools tool calls
// spread evenly among them. One chunk in ten carries a newline (escaped on
// the wire, as Markdown output does).
func renderTurn(n, tools int) []byte { return render(n, tools, false) }

// renderTurnV2 is renderTurn in v2 form: the same texts, every chunk with
// messageId "m1" (required in v2), each tool call a tool_call_update that
// creates it (v2 has no tool_call kind: updates are upserts by id) and one
// that completes it. It is the v1 turn plus the messageId field and
// "_update" on the tool calls' kind (about 17 bytes more a chunk), so v1
// and v2 rates compare the decoding, not different input.
func renderTurnV2(n, tools int) []byte { return render(n, tools, true) }

func render(n, tools int, v2 bool) []byte {
	var b []byte
	chunk, toolCall := `"sessionUpdate":"agent_message_chunk",`, `"sessionUpdate":"tool_call",`
	if v2 {
		chunk, toolCall = `"sessionUpdate":"agent_message_chunk","messageId":"m1",`, `"sessionUpdate":"tool_call_update",`
	}
	every := n + 1
	if tools > 0 {
		every = n / tools
	}
	tool := 0
	for i := range n {
		b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{`...)
		b = append(b, chunk...)
		b = append(b, `"content":{"type":"text","text":"tok`...)
		b = strconv.AppendInt(b, int64(i), 10)
		if i%10 == 9 {
			b = append(b, ` end of line\n`...)
		} else {
			b = append(b, " and a word"...)
		}
		b = append(b, "\"}}}}\n"...)
		if tools > 0 && i%every == every-1 && tool < tools {
			id := "call_" + strconv.Itoa(tool)
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{`+toolCall+`"toolCallId":"`+id+`","title":"Read src/file`+strconv.Itoa(tool)+`.go","kind":"read","status":"pending","rawInput":{"path":"/work/src/file`+strconv.Itoa(tool)+`.go"},"locations":[{"path":"/work/src/file`+strconv.Itoa(tool)+`.go"}]}}}`+"\n"...)
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","status":"completed","content":[{"type":"content","content":{"type":"text","text":"package main\n\nfunc main() {}\n"}}],"rawOutput":{"bytes":31}}}}`+"\n"...)
			tool++
		}
	}
	return b
}

// textsTurn are the agent message chunks of the texts mode: a plain text,
// one the scanner must unescape, one on a line longer than the text
// floor's 64 KiB read buffer.
var textsTurn = []string{"plain ", "q\"b\\s\u00e9\t", strings.Repeat("x", 100<<10)}

// renderTexts renders textsTurn's chunks between two available_commands
// updates, which the acp command does not write to stdout.
func renderTexts() []byte {
	commands := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}` + "\n"
	b := []byte(commands)
	for _, text := range textsTurn {
		lit, _ := json.Marshal(text)
		b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`...)
		b = append(append(b, lit...), "}}}}\n"...)
	}
	return append(b, commands...)
}

// writeStream writes n chunks of size text bytes each, rendered one at a
// time so the writer's own memory stays small.
func writeStream(out *bufio.Writer, from, n, size int) {
	var line []byte
	for i := from; i < from+n; i++ {
		line = append(line[:0], `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`...)
		start := len(line)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, ',')
		for len(line)-start < size {
			line = append(line, 'x')
		}
		line = append(line, "\"}}}}\n"...)
		out.Write(line)
	}
}

// splitLines cuts b into groups of per lines.
func splitLines(b []byte, per int) [][]byte {
	var groups [][]byte
	for len(b) > 0 {
		end, lines := 0, 0
		for lines < per && end < len(b) {
			end += bytes.IndexByte(b[end:], '\n') + 1
			lines++
		}
		groups = append(groups, b[:end])
		b = b[end:]
	}
	return groups
}
