package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// budget bounds the bytes of client messages the gateway holds at once,
// for one connection or for the whole gateway (Options.MaxConnectionBodyBytes,
// MaxGatewayBodyBytes). A POST body is counted from the moment its buffer
// is allocated until its message has been written to the agent (or
// refused): what is retained, not what was announced, so a slow client
// holds only what it has sent.
type budget struct {
	mu   sync.Mutex
	used int64
	max  int64
}

func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// The reasons readBody refuses a body, besides the reader's own errors.
var (
	errBodyTooLarge = errors.New("gateway: body over MaxBodyBytes")
	errConnBodies   = errors.New("gateway: the connection's bodies in flight are over MaxConnectionBodyBytes")
	errAllBodies    = errors.New("gateway: the gateway's bodies in flight are over MaxGatewayBodyBytes")
)

// hold is the buffer bytes one body has taken from its budgets.
type hold struct {
	conn, all *budget // conn is nil for a body that names no connection
	n         int64
}

func (h *hold) take(n int64) error {
	if h.conn != nil && !h.conn.take(n) {
		return errConnBodies
	}
	if !h.all.take(n) {
		if h.conn != nil {
			h.conn.give(n)
		}
		return errAllBodies
	}
	h.n += n
	return nil
}

func (h *hold) give(n int64) {
	if h.conn != nil {
		h.conn.give(n)
	}
	h.all.give(n)
	h.n -= n
}

// release gives back everything; the body's buffer must no longer be used.
func (h *hold) release() { h.give(h.n) }

// readBody reads a body of at most limit bytes, announced as size bytes (-1:
// unknown), into a buffer whose every byte is taken from h before it is
// allocated. The buffer grows by doubling from the announced size (or
// 4 KiB) up to limit; h counts its capacity, so the old buffer, garbage
// once copied, is not counted while the copy runs.
func readBody(r io.Reader, size, limit int64, h *hold) ([]byte, error) {
	if size > limit {
		return nil, errBodyTooLarge
	}
	c := size
	if c < 0 {
		c = min(4<<10, limit)
	}
	if err := h.take(c); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, c)
	for {
		if len(buf) == cap(buf) {
			// Full: the body has ended, or grow (within limit).
			var probe [1]byte
			n, err := io.ReadFull(r, probe[:])
			if n == 0 {
				if errors.Is(err, io.EOF) {
					return buf, nil
				}
				return nil, err
			}
			if int64(len(buf)) >= limit {
				return nil, errBodyTooLarge
			}
			c := min(max(2*int64(cap(buf)), 4<<10), limit) // 4 KiB: from an announced 0
			if err := h.take(c - int64(cap(buf))); err != nil {
				return nil, err
			}
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = append(nb, probe[0])
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// compactInPlace is json.Compact without a second buffer: b as one line
// of JSON (a client may pretty-print; the agent reads newline-delimited
// JSON), written over b itself, or ok false if b is not valid JSON. Valid
// JSON has no raw control characters inside strings, so every space, tab,
// CR and LF outside a string is insignificant and dropped.
func compactInPlace(b []byte) ([]byte, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	out := b[:0]
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		}
		out = append(out, c)
	}
	return out, true
}
