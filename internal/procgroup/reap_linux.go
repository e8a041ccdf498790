//go:build linux

package procgroup

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Reap waits for cmd, started, to exit, then calls cmd.Wait and done with
// its result. done runs on a goroutine shared by every process being
// reaped, so it must be quick and must not block.
//
// os.Process.Wait blocks its OS thread in waitid until the process exits
// (Go 1.26 still does, pidfd or not), so a host with a thousand agents
// would hold a thousand threads, and Go stops a program at 10 000. Here
// each process gets a pidfd, which becomes readable when the process exits,
// in one epoll set; that set's descriptor sits in Go's poller, where a
// single goroutine waits on it without a thread. cmd.Wait is called only
// once the process is known to have exited, so it returns at once.
// Kernels without pidfd_open (before 5.3) fall back to a goroutine, and a
// thread, per process.
func Reap(cmd *exec.Cmd, done func(error)) {
	if !reaper.add(cmd, done) {
		go func() { done(cmd.Wait()) }()
	}
}

// reaper is the shared epoll set. Its goroutine runs while it has
// processes to reap and exits when the last one is reaped.
var reaper reapSet

type reapSet struct {
	mu      sync.Mutex
	ep      *os.File        // the epoll set, nil until first used or if it cannot be made
	epfd    int             // ep's descriptor
	rc      syscall.RawConn // ep's poller hook
	broken  bool            // epoll or the poller refused: every Reap falls back
	waiting map[int32]reapEntry
	running bool
}

type reapEntry struct {
	pidfd int
	cmd   *exec.Cmd
	done  func(error)
}

// add puts cmd in the set; false means it could not (no pidfd support).
func (s *reapSet) add(cmd *exec.Cmd, done func(error)) bool {
	// The process is our unreaped child, so its pid cannot have been
	// reused: the pidfd refers to it even if it has already exited.
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err == unix.EINVAL { // Linux 5.3 to 5.9: no PIDFD_NONBLOCK, which epoll does not need
		fd, err = unix.PidfdOpen(cmd.Process.Pid, 0)
	}
	if err != nil {
		return false
	}
	unix.CloseOnExec(fd)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open() {
		unix.Close(fd)
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return false
	}
	s.waiting[int32(fd)] = reapEntry{fd, cmd, done}
	if !s.running {
		s.running = true
		go s.loop()
	}
	return true
}

// open makes the epoll set on first use; s.mu is held.
func (s *reapSet) open() bool {
	if s.ep != nil || s.broken {
		return !s.broken
	}
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		s.broken = true
		return false
	}
	// Non-blocking, so that os.NewFile hands it to the poller (an epoll
	// descriptor is itself pollable: readable when any member is ready).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		s.broken = true
		return false
	}
	ep := os.NewFile(uintptr(fd), "reaper-epoll")
	rc, err := ep.SyscallConn()
	if err != nil {
		ep.Close()
		s.broken = true
		return false
	}
	s.ep, s.epfd, s.rc, s.waiting = ep, fd, rc, map[int32]reapEntry{}
	return true
}

// loop reaps processes as they exit, until none is left.
func (s *reapSet) loop() {
	var events [64]unix.EpollEvent
	for {
		var ready []reapEntry
		var werr error
		err := s.rc.Read(func(epfd uintptr) bool {
			n, err := unix.EpollWait(int(epfd), events[:], 0)
			for err == unix.EINTR {
				n, err = unix.EpollWait(int(epfd), events[:], 0)
			}
			if err != nil {
				werr = err
				return true
			}
			if n == 0 {
				return false // nothing yet: park in the poller
			}
			s.mu.Lock()
			for _, ev := range events[:n] {
				e, ok := s.waiting[ev.Fd]
				if !ok {
					continue
				}
				delete(s.waiting, ev.Fd)
				_ = unix.EpollCtl(int(epfd), unix.EPOLL_CTL_DEL, e.pidfd, nil)
				ready = append(ready, e)
			}
			s.mu.Unlock()
			return true
		})
		for _, e := range ready {
			unix.Close(e.pidfd)
			if exited(e.cmd.Process.Pid) {
				e.done(e.cmd.Wait())
			} else {
				// Readable but not reapable (a leader whose other threads
				// still run): wait for it the blocking way, off this loop.
				go func() { e.done(e.cmd.Wait()) }()
			}
		}
		s.mu.Lock()
		if err != nil || werr != nil {
			// The poller failed us (not expected): reap the rest the
			// blocking way.
			for fd, e := range s.waiting {
				delete(s.waiting, fd)
				_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, e.pidfd, nil)
				unix.Close(e.pidfd)
				go func() { e.done(e.cmd.Wait()) }()
			}
			s.broken = true
		}
		if len(s.waiting) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// exited reports whether child pid has exited and can be reaped at once,
// without reaping it.
func exited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		// With WNOHANG a child that has not exited leaves the siginfo
		// zeroed; an error (ECHILD) means there is nothing to wait for,
		// which cmd.Wait will report at once too.
		return err != nil || info.Signo != 0
	}
}

// reapsWithoutThread: Reap waits in the poller, without a goroutine or a
// thread per process.
const reapsWithoutThread = true
