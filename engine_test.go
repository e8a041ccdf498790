package acp

import (
	"slices"
	"testing"

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
)

// The engine spells again the few method names it routes itself (it imports
// nothing of this package); they must be the client's.
func TestEngineMethodNamesAreTheClients(t *testing.T) {
	ours := []string{schema.MethodSessionUpdate, schema.MethodSessionRequestPermission, schema.MethodFSReadTextFile, schema.MethodFSWriteTextFile, schema.MethodCancelRequest}
	if !slices.Equal(engine.MethodNames, ours) {
		t.Errorf("engine.MethodNames = %q, want %q", engine.MethodNames, ours)
	}
}

// The engine's fallback errors (used when no sentinel is passed) carry the
// texts of the client's public sentinels, which the client does pass.
func TestEngineErrorsMatchTheSentinels(t *testing.T) {
	if engine.ErrClosed.Error() != ErrConnClosed.Error() || engine.ErrLimitExceeded.Error() != schema.ErrLimitExceeded.Error() {
		t.Errorf("engine errors %q, %q; client sentinels %q, %q", engine.ErrClosed, engine.ErrLimitExceeded, ErrConnClosed, schema.ErrLimitExceeded)
	}
}
