package acp

// idScanner recovers the top-level "id" and "method" of a JSON-RPC message
// from a stream of bytes without keeping the message: it is how a line too
// large to hold is still matched to the call it answers. It tracks only
// nesting depth, string state and the current top-level key; it never fails,
// and on malformed input it simply finds nothing.
type idScanner struct {
	depth  int
	inStr  bool
	esc    bool
	keyPos bool // at depth 1, the next string is a key
	valPos bool // at depth 1, after the key's colon

	mode   int // 0: nothing, 1: reading a key, 2: capturing a string value, 3: capturing a scalar
	cur    []byte
	curCut bool // cur reached scanCap and lost bytes
	key    string

	id     []byte
	idCut  bool // id is a cut-off prefix, not the id as written
	method string
}

const scanCap = 256 // longer ids or methods are not worth recovering

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		if s.inStr {
			if s.mode != 0 {
				if len(s.cur) < scanCap {
					s.cur = append(s.cur, c)
				} else {
					s.curCut = true
				}
			}
			if s.esc {
				s.esc = false
				continue
			}
			switch c {
			case '\\':
				s.esc = true
			case '"':
				s.inStr = false
				s.endString()
			}
			continue
		}
		if s.mode == 3 {
			switch c {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				s.endScalar()
			default:
				if len(s.cur) < scanCap {
					s.cur = append(s.cur, c)
				} else {
					s.curCut = true
				}
				continue
			}
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.keyPos {
				s.mode, s.cur, s.curCut = 1, s.cur[:0], false
			} else if s.depth == 1 && s.valPos && (s.key == "id" || s.key == "method") {
				s.mode, s.cur, s.curCut = 2, append(s.cur[:0], '"'), false
			}
		case '{', '[':
			s.valPos = false
			s.depth++
			s.keyPos = s.depth == 1 && c == '{'
		case '}', ']':
			s.depth--
		case ':':
			if s.depth == 1 {
				s.keyPos, s.valPos = false, true
			}
		case ',':
			if s.depth == 1 {
				s.keyPos, s.valPos = true, false
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.depth == 1 && s.valPos && s.key == "id" {
				s.mode, s.cur, s.curCut = 3, append(s.cur[:0], c), false
			}
		}
	}
}

func (s *idScanner) endString() {
	switch s.mode {
	case 1:
		if n := len(s.cur); n > 0 {
			s.key = string(s.cur[:n-1]) // drop the closing quote
		}
	case 2:
		if s.key == "id" {
			s.id, s.idCut = append([]byte(nil), s.cur...), s.curCut
		} else if n := len(s.cur); n >= 2 {
			s.method = string(s.cur[1 : n-1])
		}
		s.valPos = false
	}
	s.mode = 0
}

func (s *idScanner) endScalar() {
	if v := string(s.cur); v != "null" && v != "true" && v != "false" {
		s.id, s.idCut = append([]byte(nil), s.cur...), s.curCut
	}
	s.mode = 0
	s.valPos = false
}
