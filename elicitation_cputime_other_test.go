//go:build !unix

package acp

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
