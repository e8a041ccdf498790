package remote

// Test servers' helpers, for the package's external tests.
var (
	AcceptWS        = acceptWS
	ReadClientFrame = readClientFrame
)
