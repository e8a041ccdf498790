//go:build unix

package acp

import (
	"io"
	"os"
	"syscall"
)

// readNow reads what the pipe holds without waiting for more: an empty
// pipe reads as the end. It is how the agent's output is drained once the
// agent has exited, when a process it left behind may hold the pipe open.
func readNow(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), b)
			return true // never wait for the pipe to become readable
		}); err != nil {
			return 0, err
		}
		switch {
		case rerr == syscall.EINTR:
			continue
		case rerr == syscall.EAGAIN:
			return 0, io.EOF
		case rerr != nil:
			return 0, rerr
		case n <= 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
