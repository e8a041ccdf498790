package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ours "github.com/acpclient/acp"
	ourschema "github.com/acpclient/acp/schema"
	coder "github.com/coder/acp-go-sdk"
)

var bg = context.Background()

// ---- ours ----

type oursConn struct {
	c *ours.Client
	s *ours.Session
}

func oursConnect(mode string, n int) (*oursConn, error) {
	c, err := ours.Connect(bg, &ours.CommandTransport{Command: writerCmd(mode, n)}, nil)
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession(bg, &ourschema.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &oursConn{c, s}, nil
}

func (o *oursConn) close() { o.c.Close() }

// errV1Only is what the v2 rows report while our client cannot speak v2.
var errV1Only = errors.New("client: v1 only")

// oursV2Options are the client options that offer protocol version 2.
func oursV2Options() *ours.ClientOptions { return &ours.ClientOptions{ProtocolVersion: 2} }

// oursConnectV2 connects our client to the v2 writer, offering v2.
func oursConnectV2(mode string, n int) (*oursConn, error) {
	c, err := ours.Connect(bg, &ours.CommandTransport{Command: writerCmd(mode, n)}, oursV2Options())
	if err != nil {
		if strings.Contains(err.Error(), "-32022") || strings.Contains(err.Error(), "nsupported protocol version") {
			return nil, errV1Only
		}
		return nil, err
	}
	s, err := c.NewSession(bg, &ourschema.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &oursConn{c, s}, nil
}

// ---- coder/acp-go-sdk ----

// coderClient implements coder's Client; it counts updates and, when asked,
// is slow or assembles the message text.
type coderClient struct {
	updates atomic.Int64
	delay   time.Duration
	mu      sync.Mutex
	text    *strings.Builder
}

func (c *coderClient) SessionUpdate(_ context.Context, p coder.SessionNotification) error {
	if c.text != nil {
		if m := p.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
			c.mu.Lock()
			c.text.WriteString(m.Content.Text.Text)
			c.mu.Unlock()
		}
	}
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	c.updates.Add(1)
	return nil
}

var errUnsupported = errors.New("unsupported")

func (*coderClient) ReadTextFile(context.Context, coder.ReadTextFileRequest) (coder.ReadTextFileResponse, error) {
	return coder.ReadTextFileResponse{}, errUnsupported
}
func (*coderClient) WriteTextFile(context.Context, coder.WriteTextFileRequest) (coder.WriteTextFileResponse, error) {
	return coder.WriteTextFileResponse{}, errUnsupported
}
func (*coderClient) RequestPermission(context.Context, coder.RequestPermissionRequest) (coder.RequestPermissionResponse, error) {
	return coder.RequestPermissionResponse{}, errUnsupported
}
func (*coderClient) CreateTerminal(context.Context, coder.CreateTerminalRequest) (coder.CreateTerminalResponse, error) {
	return coder.CreateTerminalResponse{}, errUnsupported
}
func (*coderClient) KillTerminal(context.Context, coder.KillTerminalRequest) (coder.KillTerminalResponse, error) {
	return coder.KillTerminalResponse{}, errUnsupported
}
func (*coderClient) TerminalOutput(context.Context, coder.TerminalOutputRequest) (coder.TerminalOutputResponse, error) {
	return coder.TerminalOutputResponse{}, errUnsupported
}
func (*coderClient) ReleaseTerminal(context.Context, coder.ReleaseTerminalRequest) (coder.ReleaseTerminalResponse, error) {
	return coder.ReleaseTerminalResponse{}, errUnsupported
}
func (*coderClient) WaitForTerminalExit(context.Context, coder.WaitForTerminalExitRequest) (coder.WaitForTerminalExitResponse, error) {
	return coder.WaitForTerminalExitResponse{}, errUnsupported
}

type coderConn struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	conn  *coder.ClientSideConnection
	cl    *coderClient
	sid   coder.SessionId
}

func coderConnect(mode string, n int, cl *coderClient) (*coderConn, error) {
	return coderOpen(mode, n, cl, false)
}

// coderConnectLoad initializes and then loads session s1 (the writer
// replays its burst before answering).
func coderConnectLoad(mode string, n int, cl *coderClient) (*coderConn, error) {
	return coderOpen(mode, n, cl, true)
}

func coderOpen(mode string, n int, cl *coderClient, load bool) (*coderConn, error) {
	cmd := writerCmd(mode, n)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	cc := &coderConn{cmd: cmd, stdin: stdin, cl: cl}
	cc.conn = coder.NewClientSideConnection(cl, stdin, stdout)
	cc.conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := cc.conn.Initialize(bg, coder.InitializeRequest{ProtocolVersion: coder.ProtocolVersionNumber}); err != nil {
		cc.close()
		return nil, err
	}
	if load {
		ctx, cancel := context.WithTimeout(bg, 60*time.Second)
		defer cancel()
		if _, err := cc.conn.LoadSession(ctx, coder.LoadSessionRequest{SessionId: "s1", Cwd: "/tmp", McpServers: []coder.McpServer{}}); err != nil {
			cc.close()
			return nil, err
		}
		cc.sid = "s1"
		return cc, nil
	}
	res, err := cc.conn.NewSession(bg, coder.NewSessionRequest{Cwd: "/tmp", McpServers: []coder.McpServer{}})
	if err != nil {
		cc.close()
		return nil, err
	}
	cc.sid = res.SessionId
	return cc, nil
}

func (cc *coderConn) prompt(ctx context.Context) error {
	_, err := cc.conn.Prompt(ctx, coder.PromptRequest{SessionId: cc.sid, Prompt: []coder.ContentBlock{coder.TextBlock("go")}})
	return err
}

func (cc *coderConn) close() {
	cc.stdin.Close()
	done := make(chan struct{})
	go func() { cc.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cc.cmd.Process.Kill()
		<-done
	}
}

// ---- the limit: a raw line reader and an envelope decode ----

type rawConn struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	r     *bufio.Reader
	buf   []byte
	next  int
}

func rawConnect(mode string, n int) (*rawConn, error) {
	cmd := writerCmd(mode, n)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rc := &rawConn{cmd: cmd, stdin: stdin, r: bufio.NewReaderSize(stdout, 64<<10)}
	if _, err := rc.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return nil, err
	}
	if _, err := rc.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`); err != nil {
		return nil, err
	}
	return rc, nil
}

// rawConnectV2 is rawConnect offering protocol version 2.
func rawConnectV2(mode string, n int) (*rawConn, error) {
	cmd := writerCmd(mode, n)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rc := &rawConn{cmd: cmd, stdin: stdin, r: bufio.NewReaderSize(stdout, 64<<10)}
	if _, err := rc.call("initialize", `{"protocolVersion":2,"info":{"name":"limit","version":"0"},"capabilities":{}}`); err != nil {
		return nil, err
	}
	if _, err := rc.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`); err != nil {
		return nil, err
	}
	return rc, nil
}

// promptV2 sends a v2 prompt and reads until the idle state with a stop
// reason (the v2 turn's end; the response only says "accepted"), decoding
// every line's envelope. It counts the session/update lines that carry the
// turn's content: not the state updates and the echoed user message, which
// the v1 turn has no counterpart of.
func (rc *rawConn) promptV2() (int, error) {
	rc.next++
	id := fmt.Sprint(rc.next)
	if _, err := fmt.Fprintf(rc.stdin, `{"jsonrpc":"2.0","id":%s,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`+"\n", id); err != nil {
		return 0, err
	}
	updates := 0
	for {
		line, err := rc.readLine()
		if err != nil {
			return updates, err
		}
		var env rawEnvelope
		if err := json.Unmarshal(line, &env); err != nil || env.Method != "session/update" {
			continue
		}
		switch {
		case bytes.Contains(env.Params, []byte(`"sessionUpdate":"state_update"`)):
			if bytes.Contains(env.Params, []byte(`"stopReason"`)) {
				return updates, nil
			}
		case bytes.Contains(env.Params, []byte(`"sessionUpdate":"user_message"`)):
		default:
			updates++
		}
	}
}

type rawEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// call sends a request and reads lines until its response, decoding every
// line's envelope; it returns the number of session/update lines seen.
func (rc *rawConn) call(method, params string) (int, error) {
	rc.next++
	id := fmt.Sprint(rc.next)
	if _, err := fmt.Fprintf(rc.stdin, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return 0, err
	}
	updates := 0
	for {
		line, err := rc.readLine()
		if err != nil {
			return updates, err
		}
		var env rawEnvelope
		if err := json.Unmarshal(line, &env); err != nil {
			continue
		}
		if env.Method == "session/update" {
			updates++
			continue
		}
		if string(env.ID) == id {
			return updates, nil
		}
	}
}

func (rc *rawConn) readLine() ([]byte, error) {
	rc.buf = rc.buf[:0]
	for {
		frag, err := rc.r.ReadSlice('\n')
		if err == nil {
			if len(rc.buf) == 0 {
				return frag, nil
			}
			return append(rc.buf, frag...), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		rc.buf = append(rc.buf, frag...)
	}
}

func (rc *rawConn) close() {
	rc.stdin.Close()
	rc.cmd.Wait()
}
