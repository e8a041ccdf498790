//go:build linux

package acp

import (
	"encoding/binary"
	"syscall"
	"unsafe"
)

func init() {
	signalNames[syscall.SIGPWR] = "SIGPWR"
	signalNames[syscall.SIGSTKFLT] = "SIGSTKFLT"
}

// waitNoReap blocks until process pid exits and reports how, leaving it a
// zombie (waitid with WNOWAIT).
func waitNoReap(pid int) (exitStatus, error) {
	// siginfo_t is 128 bytes; for SIGCHLD its union (at offset 16 on 64-bit
	// platforms, 12 on 32-bit ones) starts with si_pid, si_uid, si_status.
	var info [128]byte
	const pPID = 1
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return exitStatus{}, errno
		}
		break
	}
	union := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		union = 16
	}
	code := int32(binary.NativeEndian.Uint32(info[8:]))
	status := int32(binary.NativeEndian.Uint32(info[union+8:]))
	const cldExited = 1
	if code == cldExited {
		return exitStatus{code: uint32(status)}, nil
	}
	return exitStatus{signaled: true, signal: signalName(syscall.Signal(status))}, nil
}
