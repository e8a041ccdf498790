package acp

import (
	"os"

	"golang.org/x/sys/unix"
)

// setPipeSize asks the kernel to make the pipe f is an end of hold n bytes
// (CommandTransport.PipeBytes). It goes through SyscallConn: f.Fd would
// put the pipe back in blocking mode and take it out of Go's poller.
func setPipeSize(f *os.File, n int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		_, serr = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n)
	}); err != nil {
		return err
	}
	return serr
}
