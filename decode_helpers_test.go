package acp

// testDecodeUpdate decodes one v1 update object through the protocol's
// front door, as the client's reader does.
func testDecodeUpdate(raw []byte) (Update, error) {
	n, err := DecodeNotification(1, []byte(`{"sessionId":"s","update":`+string(raw)+`}`))
	return n.Update, err
}
