package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks for a pipe of n bytes under r (F_SETPIPE_SZ), as
// acp.CommandTransport.PipeBytes does; best effort.
func growPipe(r io.Reader, n int) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n) })
	}
}
