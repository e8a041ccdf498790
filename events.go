package acp

// What a queued callback delivers, for the count of dropped ones. The queue
// itself is engine.EventQueue: callbacks one at a time, in order, on one
// goroutine, bounded by Limits.MaxQueuedEvents.
const (
	eventDiagnostic = iota
	eventExtNotification
	eventElicitation
	eventAuthStatus
	eventRestart
	eventKinds
)

var eventKindNames = [eventKinds]string{"diagnostics", "extension notifications", "elicitation/complete notifications", "auth status updates", "restart events"}
