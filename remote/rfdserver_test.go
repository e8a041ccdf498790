package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// rfdServer is a test server of the RFD's endpoint in front of an agent
// reached over a pair of pipes (an acptest agent, or a raw one), routed the
// way the TypeScript SDK's server routes: answers to session-scoped
// requests and everything whose params name a session on the session's
// SSE stream, the answers to session/new and session/load (and what names
// no session) on the connection's; what a stream has no reader for waits
// for one. It checks every header the RFD requires and answers its
// statuses, so a client that gets a header wrong fails here. (The gateway
// of this repository is the production server; this one is kept small and
// strict for the transport's tests.)
type rfdServer struct {
	agent func() (fromAgent io.ReadCloser, toAgent io.WriteCloser)

	// hooks
	onRequest func(w http.ResponseWriter, r *http.Request) bool // true: handled
	ssePrefix []byte                                            // written at the start of every SSE stream
	deletes   atomic.Int32

	mu    sync.Mutex
	conns map[string]*rfdConn
	wg    sync.WaitGroup
}

type rfdConn struct {
	id      string
	toAgent io.WriteCloser
	from    io.ReadCloser
	ctx     context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	streams  map[string]*mailbox // "" is the connection's
	routes   map[string]string   // our pending request id → stream
	replyTo  map[string]string   // the agent's pending request id → its session
	writeMu  sync.Mutex
	lastPost string // Acp-Session-Id of the last POST (for tests)
}

type mailbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	reader bool
	closed bool
}

func newMailbox() *mailbox { m := &mailbox{}; m.cond = sync.NewCond(&m.mu); return m }

func (m *mailbox) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cond.Broadcast()
}

func newRFDServer(agent func() (io.ReadCloser, io.WriteCloser)) *rfdServer {
	return &rfdServer{agent: agent, conns: map[string]*rfdConn{}}
}

func (s *rfdServer) Close() {
	s.mu.Lock()
	for _, c := range s.conns {
		c.shutdown()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (c *rfdConn) shutdown() {
	c.cancel()
	c.toAgent.Close()
	c.from.Close()
	c.mu.Lock()
	for _, m := range c.streams {
		m.close()
	}
	c.mu.Unlock()
}

func (c *rfdConn) stream(key string) *mailbox {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.streams[key]
	if m == nil {
		m = newMailbox()
		c.streams[key] = m
	}
	return m
}

type env struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
	} `json:"params"`
	Result *struct {
		SessionID string `json:"sessionId"`
	} `json:"result"`
}

func (s *rfdServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.onRequest != nil && s.onRequest(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			s.websocket(w, r)
			return
		}
		s.get(w, r)
	case http.MethodDelete:
		id := r.Header.Get("Acp-Connection-Id")
		if id == "" {
			http.Error(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		c := s.conns[id]
		delete(s.conns, id)
		s.mu.Unlock()
		if c == nil {
			http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
			return
		}
		s.deletes.Add(1)
		c.shutdown()
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *rfdServer) post(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "Unsupported Media Type", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return
	}
	var e env
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "Invalid JSON", http.StatusBadRequest)
		return
	}
	connID := r.Header.Get("Acp-Connection-Id")
	if e.Method == "initialize" {
		if connID != "" {
			http.Error(w, "Initialize not allowed on existing connection", http.StatusBadRequest)
			return
		}
		s.initialize(w, r, body)
		return
	}
	if connID == "" {
		http.Error(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	c := s.conns[connID]
	s.mu.Unlock()
	if c == nil {
		http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
		return
	}
	sess := r.Header.Get("Acp-Session-Id")
	c.mu.Lock()
	c.lastPost = sess
	if e.Method != "" {
		if e.Params.SessionID != "" && sess == "" {
			c.mu.Unlock()
			http.Error(w, "Missing Acp-Session-Id", http.StatusBadRequest)
			return
		}
		if e.Params.SessionID != "" && sess != e.Params.SessionID {
			c.mu.Unlock()
			http.Error(w, "Mismatched Acp-Session-Id", http.StatusBadRequest)
			return
		}
		if len(e.ID) > 0 {
			route := sess
			if e.Method == "session/load" {
				route = ""
			}
			c.routes[string(e.ID)] = route
		}
	} else if want, ok := c.replyTo[string(e.ID)]; ok {
		if want != sess {
			c.mu.Unlock()
			http.Error(w, "Missing or mismatched Acp-Session-Id", http.StatusBadRequest)
			return
		}
		delete(c.replyTo, string(e.ID))
	}
	c.mu.Unlock()
	c.writeMu.Lock()
	_, err = c.toAgent.Write(append(body, '\n'))
	c.writeMu.Unlock()
	if err != nil {
		http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *rfdServer) newConn() *rfdConn {
	from, to := s.agent()
	c := &rfdConn{id: newID(), toAgent: to, from: from, streams: map[string]*mailbox{}, routes: map[string]string{}, replyTo: map[string]string{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

func (s *rfdServer) initialize(w http.ResponseWriter, r *http.Request, body []byte) {
	c := s.newConn()
	br := bufio.NewReaderSize(c.from, 64<<10)
	if _, err := c.toAgent.Write(append(body, '\n')); err != nil {
		c.shutdown()
		http.Error(w, "agent gone", http.StatusInternalServerError)
		return
	}
	line, err := br.ReadBytes('\n')
	if err != nil {
		c.shutdown()
		http.Error(w, "agent gone", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.conns[c.id] = c
	s.mu.Unlock()
	s.wg.Add(1)
	go s.route(c, br)
	w.Header().Set("Acp-Connection-Id", c.id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(bytes.TrimSpace(line))
}

// route reads the agent's output and files each message in its stream.
// It wakes a stream's reader once per burst, not per message, so that a
// flood goes out in few writes (the client's cost is what the benchmarks
// measure).
func (s *rfdServer) route(c *rfdConn, br *bufio.Reader) {
	defer s.wg.Done()
	woken := map[*mailbox]bool{}
	wake := func() {
		for m := range woken {
			m.cond.Broadcast()
			delete(woken, m)
		}
	}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			wake()
			c.mu.Lock()
			for _, m := range c.streams {
				m.close()
			}
			c.mu.Unlock()
			return
		}
		line = bytes.TrimSpace(line)
		key := ""
		if rest, ok := bytes.CutPrefix(line, updatePrefix); ok {
			// The flood's fast path: a session/update names its session first.
			if i := bytes.IndexByte(rest, '"'); i >= 0 {
				key = string(rest[:i])
			}
		} else {
			var e env
			_ = json.Unmarshal(line, &e)
			c.mu.Lock()
			switch {
			case e.Method == "" && len(e.ID) > 0:
				key = c.routes[string(e.ID)]
				delete(c.routes, string(e.ID))
			case e.Params.SessionID != "":
				key = e.Params.SessionID
				if len(e.ID) > 0 {
					c.replyTo[string(e.ID)] = key
				}
			}
			c.mu.Unlock()
		}
		m := c.stream(key)
		m.mu.Lock()
		m.queue = append(m.queue, line)
		m.mu.Unlock()
		woken[m] = true
		if br.Buffered() == 0 || len(woken) > 1 {
			wake()
		}
	}
}

var updatePrefix = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`)

func (s *rfdServer) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "Not Acceptable", http.StatusNotAcceptable)
		return
	}
	connID := r.Header.Get("Acp-Connection-Id")
	if connID == "" {
		http.Error(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	c := s.conns[connID]
	s.mu.Unlock()
	if c == nil {
		http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
		return
	}
	m := c.stream(r.Header.Get("Acp-Session-Id"))
	m.mu.Lock()
	if m.reader {
		m.mu.Unlock()
		http.Error(w, "Outbound stream already has an active receiver", http.StatusConflict)
		return
	}
	m.reader = true
	m.mu.Unlock()
	defer func() { m.mu.Lock(); m.reader = false; m.mu.Unlock() }()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	if _, err := w.Write(s.ssePrefix); err != nil {
		return
	}
	fl.Flush()
	stop := context.AfterFunc(r.Context(), m.close)
	defer stop()
	bw := bufio.NewWriterSize(w, 64<<10)
	for {
		m.mu.Lock()
		for len(m.queue) == 0 && !m.closed {
			m.cond.Wait()
		}
		q := m.queue
		m.queue = nil
		closed := m.closed
		m.mu.Unlock()
		for _, b := range q {
			bw.WriteString("data: ")
			bw.Write(b)
			bw.WriteString("\n\n")
		}
		if bw.Flush() != nil {
			return
		}
		fl.Flush()
		if closed && len(q) == 0 {
			return
		}
	}
}

func (s *rfdServer) websocket(w http.ResponseWriter, r *http.Request) {
	c := s.newConn()
	w.Header().Set("Acp-Connection-Id", c.id)
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		c.shutdown()
		return
	}
	ws.SetReadLimit(-1)
	s.wg.Add(1)
	defer s.wg.Done()
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReaderSize(c.from, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				_ = ws.Close(websocket.StatusNormalClosure, "agent gone")
				return
			}
			if ws.Write(c.ctx, websocket.MessageText, bytes.TrimSpace(line)) != nil {
				return
			}
		}
	}()
	for {
		typ, b, err := ws.Read(c.ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			continue
		}
		if _, err := c.toAgent.Write(append(b, '\n')); err != nil {
			break
		}
	}
	c.shutdown()
	ws.CloseNow()
	<-done
}

var jsonUnmarshal = json.Unmarshal
