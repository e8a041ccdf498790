package engine

import (
	"errors"
	"time"
)

// The JSON-RPC error codes of the frames the wire writes itself.
const (
	codeParseError     int64 = -32700
	codeInvalidRequest int64 = -32600
	codeInternalError  int64 = -32603
)

// The ACP methods the wire routes itself or names without allocating. They
// are the client's method constants, spelled again: this package imports
// nothing of the client (a test there checks that they agree).
const (
	methodSessionUpdate            = "session/update"
	methodSessionRequestPermission = "session/request_permission"
	methodFSReadTextFile           = "fs/read_text_file"
	methodFSWriteTextFile          = "fs/write_text_file"
	methodCancelRequest            = "$/cancel_request"
)

// MethodNames lists the method names above, for the client's test that they
// match its own constants.
var MethodNames = []string{methodSessionUpdate, methodSessionRequestPermission, methodFSReadTextFile, methodFSWriteTextFile, methodCancelRequest}

// The errors the wire uses when Hooks leaves Closed or LimitExceeded nil
// (tests); the client passes its own public sentinels.
var (
	ErrClosed        = errors.New("acp: connection closed")
	ErrLimitExceeded = errors.New("acp: limit exceeded")
)

// waitOrTimeout reports whether ch closed within d.
func waitOrTimeout(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
