//go:build linux

package workspace

import (
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	signalNames[syscall.SIGPWR] = "SIGPWR"
	signalNames[syscall.SIGSTKFLT] = "SIGSTKFLT"
}

// waitNoReap waits until process pid exits and reports how, leaving it a
// zombie (waitid with WNOWAIT).
//
// A blocking waitid would hold an OS thread per running command, and Go
// stops the program at 10 000 threads. So the wait goes through a pidfd,
// which becomes readable when the process exits: registered with Go's
// poller, it parks the goroutine without a thread. Kernels without pidfds
// (before 5.4) get the blocking wait.
func waitNoReap(pid int) (exitStatus, error) {
	st, err := waitPidfd(pid)
	if errors.Is(err, errNoPidfd) {
		return waitBlocking(pid)
	}
	return st, err
}

var errNoPidfd = errors.New("pidfd unavailable")

func waitPidfd(pid int) (exitStatus, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return exitStatus{}, errNoPidfd
	}
	// A non-blocking descriptor makes os.NewFile register it with the
	// poller. (PIDFD_NONBLOCK would do the same, from Linux 5.10 on.)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return exitStatus{}, errNoPidfd
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return exitStatus{}, errNoPidfd
	}
	var (
		st      exitStatus
		waitErr error
	)
	err = rc.Read(func(fd uintptr) bool {
		for {
			var info siginfo
			_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, unix.P_PIDFD, fd,
				uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT|syscall.WNOHANG, 0, 0)
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN: // still running (a non-blocking pidfd, Linux 5.10)
				return false
			case 0:
				if info.pid() == 0 { // still running (WNOHANG)
					return false
				}
				st = info.status()
			default:
				waitErr = errno
			}
			return true
		}
	})
	if err != nil {
		// The poller refused the descriptor (not expected: pidfds are
		// pollable since they exist).
		return exitStatus{}, errNoPidfd
	}
	return st, waitErr
}

// waitBlocking is waitNoReap on the calling goroutine's thread.
func waitBlocking(pid int) (exitStatus, error) {
	var info siginfo
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, unix.P_PID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return exitStatus{}, errno
		}
		return info.status(), nil
	}
}

// siginfo is a siginfo_t: 128 bytes; for SIGCHLD its union (at offset 16 on
// 64-bit platforms, 12 on 32-bit ones) starts with si_pid, si_uid,
// si_status.
type siginfo [128]byte

func (s *siginfo) union() int {
	if unsafe.Sizeof(uintptr(0)) == 8 {
		return 16
	}
	return 12
}

func (s *siginfo) pid() int32 {
	return int32(binary.NativeEndian.Uint32(s[s.union():]))
}

func (s *siginfo) status() exitStatus {
	code := int32(binary.NativeEndian.Uint32(s[8:]))
	status := int32(binary.NativeEndian.Uint32(s[s.union()+8:]))
	const cldExited = 1
	if code == cldExited {
		return exitStatus{code: uint32(status)}
	}
	return exitStatus{signaled: true, signal: signalName(syscall.Signal(status))}
}
