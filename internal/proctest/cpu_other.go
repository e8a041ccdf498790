//go:build !unix

package proctest

import "time"

// CPU reports false: the process's CPU time is read on Unix only.
func CPU() (time.Duration, bool) { return 0, false }
