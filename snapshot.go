package acp

// WithoutLog returns a copy of st without Outside, the raw log of what the
// agent sent outside turns: what remains is the folded state alone, which a
// hand-written SessionState can be compared with (cmp.Diff,
// reflect.DeepEqual) without spelling out every update. st itself is
// unchanged.
func (st SessionState) WithoutLog() SessionState {
	st.Outside = nil
	return st
}
