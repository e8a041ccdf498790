package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ownPeak is how a measured process's peak RSS was taken.
type ownPeak struct {
	// hwmKB is the process's own VmHWM (/proc/<pid>/status) read while it
	// was still alive: at its exit stop when traced, else the last sample.
	hwmKB float64
	// exact is true when hwmKB was read at the exit stop (after the process
	// could allocate anything more), false when it is the last of the
	// samples taken every sampleEvery while it ran.
	exact bool
	// wait4KB is wait4's ru_maxrss, kept to show what it would have said:
	// the largest of the process's peak, its reaped children's and the
	// high-water mark of the process that spawned it, which exec carries
	// over (Go spawns with CLONE_VM|CLONE_VFORK, so that is this harness's
	// whole RSS peak, whatever ran in it before).
	wait4KB float64
}

// ptraceOExitKill is PTRACE_O_EXITKILL (Linux 3.8), absent from syscall:
// if the harness dies, the traced client dies with it instead of running on.
const ptraceOExitKill = 0x100000

// runOwnPeak runs argv with env, its stdout and stderr copied to the
// writers, and returns its own peak RSS. It is the memrun scenario's one
// way to measure: every client's figure comes from the kernel's VmHWM of
// the client's own address space, which starts empty at exec, so neither
// the harness's peak nor the agent's can leak into it.
//
// The client is traced (PTRACE_TRACEME through SysProcAttr.Ptrace, with
// PTRACE_O_TRACEEXIT and no syscall tracing), so it stops once more in
// exit, while its memory is still mapped, and VmHWM is read there: the
// exact peak, with no sampling gap at the end of the run. Only the
// initial thread is traced; it stops only at exec, at exit, and when a
// signal is delivered to it, which is passed on unchanged. Where ptrace is
// refused (a seccomp profile, a Yama policy), VmHWM is sampled every
// sampleEvery instead and the figure says so.
func runOwnPeak(argv, env []string, stdout, stderr io.Writer) (ownPeak, error) {
	type result struct {
		p   ownPeak
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Every ptrace request must come from the thread that is the
		// tracer, the one that forked the client. The thread is never
		// unlocked, so it exits with this goroutine and no other goroutine
		// inherits a tracer thread.
		runtime.LockOSThread()
		p, err := runTraced(argv, env, stdout, stderr, true)
		if errors.Is(err, syscall.EPERM) {
			p, err = runTraced(argv, env, stdout, stderr, false)
		}
		done <- result{p, err}
	}()
	r := <-done
	return r.p, r.err
}

func runTraced(argv, env []string, stdout, stderr io.Writer, trace bool) (p ownPeak, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return p, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return p, err
	}
	var copies sync.WaitGroup
	for _, c := range []struct {
		w io.Writer
		r *os.File
	}{{stdout, outR}, {stderr, errR}} {
		copies.Go(func() {
			io.Copy(c.w, c.r)
			c.r.Close()
		})
	}
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{nil, outW, errW},
		Sys:   &syscall.SysProcAttr{Ptrace: trace},
	})
	outW.Close()
	errW.Close()
	if err != nil {
		copies.Wait()
		return p, err
	}
	defer proc.Release()
	pid := proc.Pid
	status := "/proc/" + strconv.Itoa(pid) + "/status"

	var ws syscall.WaitStatus
	var ru syscall.Rusage
	if trace {
		// The child stops with SIGTRAP after its exec succeeds.
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			return p, err
		}
		if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT|ptraceOExitKill); err != nil {
			proc.Kill()
			syscall.Wait4(pid, &ws, 0, nil)
			copies.Wait()
			return p, fmt.Errorf("ptrace options: %w", err)
		}
		if err := syscall.PtraceCont(pid, 0); err != nil {
			return p, err
		}
	} else {
		// Sampling: a goroutine reads VmHWM until the process is reaped.
		// The figure only rises, so the last read is the best known.
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		var last float64
		sampler.Go(func() {
			tk := time.NewTicker(sampleEvery)
			defer tk.Stop()
			for {
				if kb, ok := readVmHWM(status); ok {
					last = kb
				}
				select {
				case <-stop:
					return
				case <-tk.C:
				}
			}
		})
		defer func() { close(stop); sampler.Wait(); p.hwmKB = max(p.hwmKB, last) }()
	}
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, &ru); err != nil {
			if err == syscall.EINTR {
				continue
			}
			return p, err
		}
		switch {
		case ws.Exited() || ws.Signaled():
			p.wait4KB = float64(ru.Maxrss)
			copies.Wait()
			if ws.Signaled() || ws.ExitStatus() != 0 {
				return p, fmt.Errorf("%s: %v", argv[0], ws)
			}
			return p, nil
		case ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			if kb, ok := readVmHWM(status); ok {
				p.hwmKB, p.exact = kb, true
			}
			syscall.PtraceCont(pid, 0)
		case ws.Stopped():
			// A signal on its way to the client: deliver it.
			syscall.PtraceCont(pid, int(ws.StopSignal()))
		}
	}
}

// readVmHWM reads the VmHWM line (kB) of a /proc/<pid>/status file.
func readVmHWM(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// selfVmHWM is this process's own VmHWM in kB (0 if unknown).
func selfVmHWM() float64 {
	kb, _ := readVmHWM("/proc/self/status")
	return kb
}
