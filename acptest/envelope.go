package acptest

import (
	"bytes"
	"encoding/json"

	"github.com/acpclient/acp/internal/jsonscan"
)

// How the scripted agent reads one JSON-RPC message: by the peeker the
// client under test routes by.

// parseMessage reads one JSON-RPC message with jsonscan.Peek, the reader
// the client's engine routes by, so the scripted agent reads a line as the
// client under test would: a message the client refuses (a routing member
// repeated or written in another case, a method that is not a string) is
// refused here too. The message is copied once; its members alias the
// copy, so they outlive the read buffer.
func parseMessage(line []byte) (message, error) {
	line = bytes.Clone(line)
	e, err := jsonscan.Peek(line)
	if err != nil {
		return message{}, err
	}
	m := message{ID: e.ID, Method: e.Method, Params: e.Params, Result: e.Result}
	if e.Version2() {
		m.JSONRPC = "2.0"
	}
	if e.Error != nil && string(e.Error) != "null" {
		m.Error = new(Error)
		if err := json.Unmarshal(e.Error, m.Error); err != nil {
			return message{}, err
		}
	}
	return m, nil
}
