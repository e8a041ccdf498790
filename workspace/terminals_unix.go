//go:build unix

package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func statusOf(ps *os.ProcessState) exitStatus {
	if ps == nil {
		return exitStatus{signaled: true, signal: "unknown"}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitStatus{signaled: true, signal: signalName(ws.Signal())}
	}
	return exitStatus{code: uint32(ps.ExitCode())}
}

// signalNames are the conventional names agents expect ("SIGKILL"); Go's
// Signal.String gives prose ("killed").
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGFPE: "SIGFPE",
	syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT",
	syscall.SIGIO: "SIGIO", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGPROF: "SIGPROF", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGSTOP: "SIGSTOP",
	syscall.SIGSYS: "SIGSYS", syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGTSTP: "SIGTSTP", syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU",
	syscall.SIGURG: "SIGURG", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGWINCH: "SIGWINCH", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s)) // real-time signals have no fixed names
}

// lookCommand finds the executable the way a shell would for the command's
// own environment: names with a slash are taken relative to dir, others are
// searched in the PATH of env (not of this process, which the request may
// have overridden). Relative PATH entries are skipped, as os/exec does.
func lookCommand(name, dir string, env []string) (string, error) {
	if strings.ContainsRune(name, '/') {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, executable(p)
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}
