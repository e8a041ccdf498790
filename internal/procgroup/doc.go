// Package procgroup starts a process as the head of a tree that can be
// ended as a whole and that does not outlive this process, however this
// process ends (SIGKILL included). The client's agent subprocess
// (acp.CommandTransport) and the commands of workspace.Terminals both start
// that way.
//
// On Unix the process leads a new process group, and a watchdog joins the
// group: a /bin/sh (under 2 MB resident, mostly shared; no CPU) that blocks
// reading a pipe whose write end only this process holds. When this process
// dies the kernel closes that end, and the watchdog SIGKILLs its whole
// group. On Linux the leader also gets SIGKILL from the kernel when this
// process dies (Pdeathsig), which covers a leader whose watchdog could not
// be started (no /bin/sh).
//
// [Reap] waits for a started process (a leader, a watchdog) without an OS
// thread per process on Linux: a pidfd per process in one epoll set, in
// Go's poller.
//
// On Windows the process runs in a job object of its own, which every
// process it starts joins, and which kills whatever is still in it when its
// last handle closes: when the Group is closed or this process dies.
//
// What escapes: on Unix, a descendant that leaves the group (setsid,
// setpgid: daemons, terminal multiplexers); on Windows, a process started
// in the moment before the leader joined its job. A process running as
// this process's user can always escape on purpose, by killing its
// watchdog for one; the guarantees hold for careless processes, not for
// ones bent on staying.
package procgroup
