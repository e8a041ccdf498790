package acptest

// StopReason is why a turn ended: what a turn script ([Options.OnPrompt])
// returns and the agent sends as the session/prompt result's stopReason.
// The names match the acp package's. Any other string is sent as given, to
// test how a client takes a reason it does not know.
type StopReason string

const (
	StopReasonEndTurn         StopReason = "end_turn"          // the model finished
	StopReasonMaxTokens       StopReason = "max_tokens"        // the token limit was reached
	StopReasonMaxTurnRequests StopReason = "max_turn_requests" // too many model requests in one turn
	StopReasonRefusal         StopReason = "refusal"           // the agent refused to continue
	StopReasonCancelled       StopReason = "cancelled"         // the client cancelled the turn
)
