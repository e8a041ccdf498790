//go:build !unix

package interop

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
