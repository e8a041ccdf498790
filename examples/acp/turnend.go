package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
	"unicode/utf8"

	"github.com/acpclient/acp"
)

// A turn_end event carries the turn's state, and so the whole text of its
// messages: on a long turn the largest line the command writes. Encoded
// as one value it is held three times over (TurnState's MarshalJSON, the
// encoder's compaction of that, and its buffer growing by doubling), which
// set the peak RSS of `acp --json` on a 100 000-chunk turn. writeTurnEnd
// writes the same bytes with each long text left out of the encoding and
// written after it in pieces, escaped as encoding/json escapes it.

// spliceMin is the length from which a message's text is written in
// pieces, and splicePiece the most of it escaped at once.
const (
	spliceMin   = 8 << 10
	splicePiece = 32 << 10
)

// writeTurnEnd writes ev, a turn_end event whose "state" is st, as
// json.NewEncoder(w).Encode(ev) with ev["state"] = st would.
func writeTurnEnd(w io.Writer, ev map[string]any, st acp.TurnState) error {
	// Each long text is replaced by a placeholder the agent cannot have
	// written (a random nonce), found again in the encoded line.
	nonce := strconv.FormatUint(rand.Uint64(), 36)
	var texts []string
	hold := func(ms []acp.Message) []acp.Message {
		var out []acp.Message
		for i, m := range ms {
			if len(m.Text) < spliceMin {
				continue
			}
			if out == nil {
				out = append([]acp.Message(nil), ms...)
			}
			out[i].Text = "\x00acp:" + nonce + ":" + strconv.Itoa(len(texts)) + "\x00"
			texts = append(texts, m.Text)
		}
		if out == nil {
			return ms
		}
		return out
	}
	st.Messages, st.Thoughts, st.UserMessages = hold(st.Messages), hold(st.Thoughts), hold(st.UserMessages)
	ev["state"] = st
	var line bytes.Buffer
	if err := json.NewEncoder(&line).Encode(ev); err != nil {
		return err
	}
	b := line.Bytes()
	mark := []byte(`"\u0000acp:` + nonce + ":")
	var piece []byte
	for {
		i := bytes.Index(b, mark)
		if i < 0 {
			break
		}
		j := bytes.Index(b[i+len(mark):], []byte(`\u0000"`))
		n, err := -1, error(nil)
		if j >= 0 {
			n, err = strconv.Atoi(string(b[i+len(mark) : i+len(mark)+j]))
		}
		if j < 0 || err != nil || n < 0 || n >= len(texts) {
			// Our own placeholder, as encoding/json escapes it: not seen.
			return errors.New("turn_end: a placeholder for a message text is malformed")
		}
		if _, err := w.Write(b[:i]); err != nil {
			return err
		}
		if piece, err = writeJSONString(w, texts[n], piece); err != nil {
			return err
		}
		b = b[i+len(mark)+j+len(`\u0000"`):]
	}
	_, err := w.Write(b)
	return err
}

// writeJSONString writes s quoted as appendJSONString quotes it, in pieces
// of about splicePiece bytes, using buf. A piece ends where no rune is
// cut, so invalid bytes read as they would in one piece.
func writeJSONString(w io.Writer, s string, buf []byte) ([]byte, error) {
	buf = append(buf[:0], '"')
	for len(s) > 0 {
		// Back to a rune's start, or past utf8.UTFMax continuation bytes,
		// none of which a rune that starts before them can reach: a run
		// of them (an agent's invalid text) cannot grow the piece.
		n := min(len(s), splicePiece)
		for k := 0; k < utf8.UTFMax && n < len(s) && !utf8.RuneStart(s[n]); k++ {
			n++
		}
		start := len(buf) // appendJSONString quotes the piece: drop its quotes
		buf = appendJSONString(buf, s[:n])
		buf = buf[:start+copy(buf[start:], buf[start+1:len(buf)-1])]
		s = s[n:]
		if len(s) == 0 {
			break
		}
		if _, err := w.Write(buf); err != nil {
			return buf, err
		}
		buf = buf[:0]
	}
	buf = append(buf, '"')
	_, err := w.Write(buf)
	return buf, err
}
