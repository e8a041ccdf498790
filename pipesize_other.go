//go:build !linux

package acp

import "os"

// setPipeSize does nothing off Linux, which has no way to size a pipe
// (CommandTransport.PipeBytes).
func setPipeSize(*os.File, int) error { return nil }
