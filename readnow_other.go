//go:build !unix

package acp

import "os"

// readNow cannot read without waiting here: pipes have no deadlines on
// these systems (Windows included), so it is never reached (see
// exitReader), and a grandchild that holds the agent's stdout keeps the
// connection open until Close.
func readNow(f *os.File, b []byte) (int, error) { return f.Read(b) }
