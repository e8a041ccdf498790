package acptest

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// Replay returns an agent that answers a client by replaying a recorded
// transcript (for example one of a real agent, recorded by a proxy or by
// [Agent.WriteTranscript]).
//
// The recording is cut into segments: each client frame with the agent
// frames that follow it up to the next client frame. When the live client
// sends a request or notification, the next unused segment recorded for
// the same method is played; when it answers one of the agent's requests,
// the segment that followed the recorded answer to that request is played.
// Ids are rewritten so the conversation stays consistent: a recorded
// response carries the id of the live request matched to the recorded one,
// and the agent's own requests get fresh ids of this connection. Frames
// are otherwise written byte for byte, key order included. A request with
// no segment left is answered with -32603. Notes ("!") are skipped.
//
// Each connection replays the whole transcript from the start; segments are
// played one at a time, in the order their triggers arrived.
func Replay(frames []Frame) *Agent {
	a := New(&Options{NoInitializeCheck: true})
	a.replay = frames
	return a
}

// NewReplay reads a transcript (see [ReadTranscript]) and returns
// Replay(frames).
func NewReplay(r io.Reader) (*Agent, error) {
	frames, err := ReadTranscript(r)
	if err != nil {
		return nil, err
	}
	return Replay(frames), nil
}

type segment struct {
	recID json.RawMessage // the recorded request's id, nil for notifications
	out   [][]byte
}

// replayer is one connection's replay state.
type replayer struct {
	c  *Conn
	mu sync.Mutex
	// byTrigger holds unplayed segments: "m:"+method for client requests
	// and notifications, "r:"+recorded agent request id for responses.
	byTrigger map[string][]*segment
	// clientIDs maps a recorded client request id to the live one.
	clientIDs map[string]json.RawMessage
	// agentIDs maps a live agent request id to the recorded one.
	agentIDs map[string]string

	q       []func()
	running bool
}

// newReplayer cuts frames into segments. It returns the replayer and the
// agent frames recorded before the first client frame, to play at once.
func newReplayer(c *Conn, frames []Frame) (*replayer, *segment) {
	rp := &replayer{
		c:         c,
		byTrigger: make(map[string][]*segment),
		clientIDs: make(map[string]json.RawMessage),
		agentIDs:  make(map[string]string),
	}
	pre := &segment{}
	cur := pre
	for _, f := range frames {
		switch f.Dir {
		case ">":
			var m message
			if json.Unmarshal(f.Msg, &m) != nil {
				continue
			}
			seg := &segment{}
			var key string
			if m.Method != "" {
				key = "m:" + m.Method
				seg.recID = m.ID
			} else {
				key = "r:" + idKey(m.ID)
			}
			rp.byTrigger[key] = append(rp.byTrigger[key], seg)
			cur = seg
		case "<":
			var b bytes.Buffer
			if json.Compact(&b, f.Msg) == nil {
				cur.out = append(cur.out, b.Bytes())
			}
		}
	}
	return rp, pre
}

// trigger is called on the read goroutine for every client message in
// replay mode. It queues the matching segment for the replay goroutine.
func (rp *replayer) trigger(m message) {
	var key string
	if m.Method != "" {
		key = "m:" + m.Method
	} else {
		rp.mu.Lock()
		rec, ok := rp.agentIDs[idKey(m.ID)]
		rp.mu.Unlock()
		if !ok {
			return
		}
		key = "r:" + rec
	}
	rp.mu.Lock()
	segs := rp.byTrigger[key]
	var seg *segment
	if len(segs) > 0 {
		seg, rp.byTrigger[key] = segs[0], segs[1:]
		if seg.recID != nil && m.ID != nil {
			rp.clientIDs[idKey(seg.recID)] = m.ID
		}
	}
	rp.mu.Unlock()
	switch {
	case seg != nil:
		rp.enqueue(func() { rp.play(seg) })
	case m.Method != "" && m.ID != nil:
		id, method := m.ID, m.Method
		rp.enqueue(func() {
			_ = rp.c.writeMsg(response{JSONRPC: "2.0", ID: id, Error: &Error{
				Code: CodeInternalError, Message: "acptest: replay has no recorded reply for " + method}})
		})
	}
}

// enqueue runs f after every previously queued function, on a goroutine
// of the connection; the read goroutine never waits for it.
func (rp *replayer) enqueue(f func()) {
	rp.mu.Lock()
	rp.q = append(rp.q, f)
	if rp.running {
		rp.mu.Unlock()
		return
	}
	rp.running = true
	rp.mu.Unlock()
	rp.c.spawn(func() {
		for {
			rp.mu.Lock()
			if len(rp.q) == 0 {
				rp.running = false
				rp.mu.Unlock()
				return
			}
			f := rp.q[0]
			rp.q = rp.q[1:]
			rp.mu.Unlock()
			f()
		}
	})
}

func (rp *replayer) play(seg *segment) {
	for _, b := range seg.out {
		var m message
		if json.Unmarshal(b, &m) != nil {
			_ = rp.c.writeFrame(b, true, "")
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil: // the agent's own request
			rp.c.mu.Lock()
			n := rp.c.nextID
			rp.c.nextID++
			rp.c.mu.Unlock()
			id := json.RawMessage(strconv.FormatInt(n, 10))
			if rp.c.a.opts.StringIDs {
				id = json.RawMessage(strconv.Quote("req-" + strconv.FormatInt(n, 10)))
			}
			rp.mu.Lock()
			rp.agentIDs[idKey(id)] = idKey(m.ID)
			rp.mu.Unlock()
			b = replaceID(b, id)
		case m.Method == "" && m.ID != nil: // a response to the client
			rp.mu.Lock()
			live, ok := rp.clientIDs[idKey(m.ID)]
			rp.mu.Unlock()
			if ok {
				b = replaceID(b, live)
			}
		}
		if err := rp.c.writeFrame(b, true, ""); err != nil {
			return
		}
	}
}

// replaceID returns msg with the value of its top-level "id" replaced by
// id, leaving every other byte as it was.
func replaceID(msg []byte, id json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return msg
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return msg
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return msg
		}
		if t == "id" {
			end := int(dec.InputOffset())
			start := end - len(v)
			out := make([]byte, 0, len(msg)-len(v)+len(id))
			out = append(out, msg[:start]...)
			out = append(out, id...)
			return append(out, msg[end:]...)
		}
	}
	return msg
}
