package acp

// WithoutLog returns a copy of st without Updates, the raw log of what the
// agent sent: what remains is the folded state alone, which a hand-written
// TurnState can be compared with (cmp.Diff, reflect.DeepEqual) without
// spelling out every update. st itself is unchanged.
func (st TurnState) WithoutLog() TurnState {
	st.Updates = nil
	return st
}

// WithoutLog returns a copy of st without its raw logs: Outside, and the
// Updates of History (see [TurnState.WithoutLog]). What remains is the
// folded state alone, which a hand-written SessionState can be compared
// with. st itself is unchanged.
func (st SessionState) WithoutLog() SessionState {
	st.Outside = nil
	st.History = st.History.WithoutLog()
	return st
}
