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
// Live client frames are matched to recorded ones: a request or
// notification to the next unmatched recorded frame of the same method, an
// answer to one of the agent's requests to the recorded answer to that
// request. Each recorded agent frame waits for one client frame, its
// trigger, to have been matched:
//
//   - a response's trigger is the latest of the request it answers (the
//     latest recorded client request with its id before it) and the client
//     frames recorded between that request and the response that are not
//     requests: a session/cancel, or the client's answer to a request of
//     the agent's, may be what the response followed from. Later client
//     requests are skipped, since a live client may hold them back until
//     this response arrives (the acp client never sends session/new before
//     initialize is answered). So a reply the agent sent late — after the
//     client had already sent later requests, as Cursor's agent answers
//     initialize after session/new has been sent — plays as soon as its own
//     request has arrived, while a session/prompt result recorded after a
//     session/cancel still waits for the cancel;
//   - any other agent frame (a notification, a request of the agent's, or a
//     response whose request is not in the recording) waits for the client
//     frame recorded just before it;
//   - frames recorded before the first client frame play at once.
//
// Besides its trigger, an agent frame waits for every agent frame recorded
// between it and the client frame recorded just before it: within the run
// of agent frames that follows one client frame, recorded order is kept, so
// a late response never overtakes the updates the agent sent before it
// (a response recorded after a later client request and an update still
// waits for that request, since the update does). Runs that follow different
// client frames play independently, each as soon as it may; frames that
// become playable at the same moment play in recorded order.
//
// Ids are rewritten so the conversation stays consistent: a recorded
// response carries the id of the live request matched to the recorded one,
// and the agent's own requests get fresh ids of this connection. Frames
// are otherwise written byte for byte, key order included. A request with
// no recorded frame left to match is answered with -32603. Notes ("!") are
// skipped.
//
// Each connection replays the whole transcript from the start; frames are
// written one at a time, in the order they became playable.
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

// segment is a run of agent frames played together.
type segment struct {
	out [][]byte
}

// recClient is a recorded client frame.
type recClient struct {
	recID   json.RawMessage // the recorded request id, nil for notifications and answers
	liveID  json.RawMessage // the id of the live request matched to it
	arrived bool
}

// recAgent is a recorded agent frame after the first client frame.
type recAgent struct {
	b         []byte
	trigger   int // index in replayer.clients of the frame it waits for
	prev      int // the agent frame recorded before it after the same client frame, or -1
	answers   int // for a response: index of the client request it answers, else -1
	scheduled bool
}

// replayer is one connection's replay state.
type replayer struct {
	c  *Conn
	mu sync.Mutex
	// clients are the recorded client frames; agent the recorded agent
	// frames after the first client frame, in recorded order.
	clients []recClient
	agent   []recAgent
	// unmatched holds, by key, the indices of recorded client frames not
	// yet matched, in recorded order: "m:"+method for requests and
	// notifications, "r:"+recorded agent request id for answers.
	unmatched map[string][]int
	// agentIDs maps a live agent request id to the recorded one.
	agentIDs map[string]string
	// lo is the first agent frame not yet scheduled.
	lo int

	q       []func()
	running bool
}

// newReplayer indexes frames. It returns the replayer and the agent frames
// recorded before the first client frame, to play at once.
func newReplayer(c *Conn, frames []Frame) (*replayer, *segment) {
	rp := &replayer{
		c:         c,
		unmatched: make(map[string][]int),
		agentIDs:  make(map[string]string),
	}
	pre := &segment{}
	requests := make(map[string]int) // recorded request id → latest client frame with it
	lastOther := -1                  // the latest client frame that is not a request
	last := -1                       // the agent frame recorded last after the current client frame
	for _, f := range frames {
		switch f.Dir {
		case ">":
			m, err := parseMessage(f.Msg)
			if err != nil {
				continue
			}
			i := len(rp.clients)
			rc := recClient{}
			var key string
			if m.Method != "" {
				key = "m:" + m.Method
				if m.ID != nil {
					rc.recID = m.ID
					requests[idKey(m.ID)] = i
				}
			} else {
				key = "r:" + idKey(m.ID)
			}
			if m.Method == "" || m.ID == nil {
				lastOther = i
			}
			rp.clients = append(rp.clients, rc)
			rp.unmatched[key] = append(rp.unmatched[key], i)
			last = -1
		case "<":
			var b bytes.Buffer
			if json.Compact(&b, f.Msg) != nil {
				continue
			}
			if len(rp.clients) == 0 {
				pre.out = append(pre.out, b.Bytes())
				continue
			}
			ra := recAgent{b: b.Bytes(), trigger: len(rp.clients) - 1, prev: last, answers: -1}
			if m, err := parseMessage(ra.b); err == nil && m.Method == "" && m.ID != nil {
				if q, ok := requests[idKey(m.ID)]; ok {
					ra.trigger, ra.answers = max(q, lastOther), q
				}
			}
			last = len(rp.agent)
			rp.agent = append(rp.agent, ra)
		}
	}
	return rp, pre
}

// trigger is called on the read goroutine for every client message in
// replay mode. It matches m to a recorded client frame and queues the agent
// frames that this makes playable for the replay goroutine.
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
	idx := rp.unmatched[key]
	if len(idx) == 0 {
		rp.mu.Unlock()
		if m.Method != "" && m.ID != nil {
			id, method := m.ID, m.Method
			rp.enqueue(func() {
				_ = rp.c.writeMsg(response{JSONRPC: "2.0", ID: id, Error: &Error{
					Code: CodeInternalError, Message: "acptest: replay has no recorded reply for " + method}})
			})
		}
		return
	}
	rp.unmatched[key] = idx[1:]
	rc := &rp.clients[idx[0]]
	rc.arrived = true
	if rc.recID != nil && m.ID != nil {
		rc.liveID = m.ID
	}
	seg := rp.schedule()
	rp.mu.Unlock()
	if len(seg) > 0 {
		rp.enqueue(func() { rp.playAgent(seg) })
	}
}

// schedule marks and returns, in recorded order, every agent frame that
// may now play: its trigger arrived and the frame before it after the same
// client frame is scheduled. Frames are written in the order they are
// scheduled, so a frame scheduled in this pass is as good as played for
// the ones after it. Called with rp.mu held.
func (rp *replayer) schedule() []int {
	var out []int
	for i := rp.lo; i < len(rp.agent); i++ {
		ra := &rp.agent[i]
		if ra.scheduled || !rp.clients[ra.trigger].arrived || (ra.prev >= 0 && !rp.agent[ra.prev].scheduled) {
			continue
		}
		ra.scheduled = true
		out = append(out, i)
	}
	for rp.lo < len(rp.agent) && rp.agent[rp.lo].scheduled {
		rp.lo++
	}
	return out
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

// play writes the frames recorded before the first client frame.
func (rp *replayer) play(seg *segment) {
	for _, b := range seg.out {
		if rp.write(b, nil) != nil {
			return
		}
	}
}

// playAgent writes the scheduled agent frames at the given indices.
func (rp *replayer) playAgent(idx []int) {
	for _, i := range idx {
		rp.mu.Lock()
		ra := rp.agent[i]
		var live json.RawMessage
		if ra.answers >= 0 {
			live = rp.clients[ra.answers].liveID
		}
		rp.mu.Unlock()
		if rp.write(ra.b, live) != nil {
			return
		}
	}
}

// write writes one recorded agent frame: a request of the agent's gets a
// fresh id, a response the live id (when non-nil).
func (rp *replayer) write(b []byte, live json.RawMessage) error {
	m, err := parseMessage(b)
	if err != nil {
		return rp.c.writeFrame(b, true, "")
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
	case m.Method == "" && m.ID != nil && live != nil: // a response to the client
		b = replaceID(b, live)
	}
	return rp.c.writeFrame(b, true, "")
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
