package acp

// failRunningTurns ends, with reason, every turn still running when the
// connection ends that end() did not find among the pending prompt calls:
// a v2 turn whose prompt the agent accepted is no longer a pending call
// (its end is the agent's idle state_update, which can no longer come), so
// without this it would wait until its ctx ends. Turns already ended are
// left alone (Turn.finish runs once).
func (c *Client) failRunningTurns(reason error) {
	c.mu.Lock()
	var turns []*Turn
	for _, s := range c.sessions {
		s.mu.Lock()
		if t := s.turn; t != nil && !t.life.ended {
			turns = append(turns, t)
		}
		s.mu.Unlock()
	}
	c.mu.Unlock()
	for _, t := range turns {
		t.fail(callError(MethodSessionPrompt, reason))
	}
}
