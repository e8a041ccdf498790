// Command perfsplit splits one process's CPU time, from a perf recording,
// into the stages an ACP client spends it in, per update: it reads the
// output of `perf script -F comm,period,ip,sym` and names each sample by
// the frame nearest its leaf that belongs to a stage (see stages).
//
//	perf record -g -F 4000 -o acp.perf acp -p 'stream 1000000' -- fastagent | cat >/dev/null
//	perf script -i acp.perf -F comm,period,ip,sym | perfsplit -comm acp -updates 1000000
//
// The figures are CPU time, not wall time: the reader, the renderer and
// the collector run on their own threads, side by side.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// stage is one line of the split: a sample belongs to the first stage one
// of whose prefixes starts the symbol of the frame nearest the sample's
// leaf that any stage claims. Kernel frames are claimed by no stage, so a
// system call counts for the Go code that made it.
type stage struct {
	name     string
	what     string
	prefixes []string
}

var stages = []stage{
	{"gc", "the collector: background marking, assists, sweeping, write barriers", []string{
		"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.gcDrain", "runtime.bgsweep", "runtime.bgscavenge",
		"runtime.markroot", "runtime.gcStart", "runtime.wbBufFlush", "gcWriteBarrier", "runtime.gcMarkDone", "runtime.sweepone",
	}},
	{"write", "the command's writes: write(2) of stdout and stderr", []string{"syscall.write", "os.(*File).Write", "internal/poll.(*FD).Write"}},
	{"read", "reading the agent's pipe and cutting lines", []string{
		"os.(*File).Read", "syscall.read", "internal/poll.(*FD).Read",
		"github.com/acpclient/acp/internal/engine.(*readBuf)", "github.com/acpclient/acp/internal/engine.(*LineReader)",
		"github.com/acpclient/acp.(*exitReader)",
	}},
	{"scan", "validating a line and finding its parts (internal/jsonscan)", []string{"github.com/acpclient/acp/internal/jsonscan."}},
	{"feed", "the turn's Events feed: a logged chunk made again as an update and an Event for the renderer", []string{
		"github.com/acpclient/acp.updatesLocked", "github.com/acpclient/acp.updateLocked", "github.com/acpclient/acp.newTextChunk",
		"github.com/acpclient/acp.entryUpdate", "github.com/acpclient/acp.(*Turn).Events", "github.com/acpclient/acp.(*Turn).event",
		"main.runTurn.func1.(*Turn).Events",
	}},
	{"log", "appending the event to the turn's log, waking its readers", []string{
		"github.com/acpclient/acp.(*Turn).appendLocked", "github.com/acpclient/acp.(*Turn).logAgentLocked",
		"github.com/acpclient/acp.(*Turn).recordLocked", "github.com/acpclient/acp.(*turnLog)",
	}},
	{"fold", "folding the update into the turn's state (the library)", []string{
		"github.com/acpclient/acp.(*Client).onUpdate", "github.com/acpclient/acp.(*Client).apply", "github.com/acpclient/acp.(*Turn).apply",
		"github.com/acpclient/acp.(*msgAcc)", "github.com/acpclient/acp.(*fold)", "github.com/acpclient/acp.(*Session).charge",
		"github.com/acpclient/acp.(*Client).act",
	}},
	{"render", "the command's renderer: formatting, escaping, buffering", []string{"main."}},
	{"dispatch", "framing and routing a line (internal/engine, jrpc2)", []string{"github.com/acpclient/acp/internal/engine.", "github.com/creachadair/jrpc2", "github.com/acpclient/acp."}},
	{"sched", "the Go scheduler, parking and waking goroutines, locks", []string{
		"runtime.schedule", "runtime.findRunnable", "runtime.park_m", "runtime.mcall", "runtime.futex", "runtime.usleep",
		"runtime.sysmon", "runtime.notesleep", "runtime.stopm", "runtime.goready", "runtime.ready", "runtime.wakep",
		"runtime.chansend", "runtime.chanrecv", "runtime.selectgo", "runtime.gopark", "runtime.lock", "runtime.unlock",
		"sync.(*Mutex)", "internal/sync.(*Mutex)", "runtime.semacquire", "runtime.semrelease", "runtime.mstart", "runtime.newproc",
	}},
	{"start", "process start and exit: the loader, package initialisation", []string{"_dl_", "runtime.rt0_go", "runtime.schedinit", "runtime.doInit", "runtime.main", "_start"}},
}

// sample is one perf sample: its period (ns of CPU for cpu-clock) and its
// symbols, leaf first.
type sample struct {
	comm   string
	period int64
	syms   []string
}

// parse reads perf script's output: a header line per sample ("comm
// period", perhaps indented with spaces), then one frame a line, indented
// with a tab ("ip sym"), then a blank line.
func parse(r io.Reader, each func(sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var cur *sample
	flush := func() {
		if cur != nil {
			each(*cur)
			cur = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			flush()
		case line[0] == '\t':
			if cur != nil && len(f) >= 2 {
				cur.syms = append(cur.syms, strings.Join(f[1:], " "))
			}
		default:
			flush()
			if p, err := strconv.ParseInt(f[len(f)-1], 10, 64); err == nil && len(f) >= 2 {
				cur = &sample{comm: strings.Join(f[:len(f)-1], " "), period: p}
			}
		}
	}
	flush()
	return sc.Err()
}

// classify returns the stage of a sample, "other" when no frame is
// claimed.
func classify(syms []string) string {
	for _, s := range syms {
		for _, st := range stages {
			for _, p := range st.prefixes {
				if strings.HasPrefix(s, p) {
					return st.name
				}
			}
		}
	}
	return "other"
}

func main() {
	comm := flag.String("comm", "", "the process (perf's comm, at most 15 bytes) whose samples are split; all when empty")
	updates := flag.Int("updates", 0, "updates in the recorded turn: the figures are per update")
	flag.Parse()
	if *updates <= 0 {
		fmt.Fprintln(os.Stderr, "usage: perf script -F comm,period,ip,sym | perfsplit [-comm NAME] -updates N")
		os.Exit(2)
	}
	ns := map[string]int64{}
	var total int64
	err := parse(os.Stdin, func(s sample) {
		if *comm != "" && s.comm != *comm {
			return
		}
		c := classify(s.syms)
		ns[c] += s.period
		total += s.period
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfsplit:", err)
		os.Exit(1)
	}
	if total == 0 {
		fmt.Fprintf(os.Stderr, "perfsplit: no samples of %q\n", *comm)
		os.Exit(1)
	}
	fmt.Print(table(ns, total, *updates))
}

// table formats the split, stages in their order, then other and the
// total, in ns of CPU per update and as a share of the process's CPU.
func table(ns map[string]int64, total int64, updates int) string {
	var b strings.Builder
	names := make([]string, 0, len(stages)+1)
	for _, st := range stages {
		names = append(names, st.name)
	}
	names = append(names, "other")
	what := map[string]string{"other": "anything else (kernel-only samples, the runtime's rest)"}
	for _, st := range stages {
		what[st.name] = st.what
	}
	fmt.Fprintf(&b, "%-9s %12s %7s  %s\n", "stage", "ns/update", "share", "what")
	for _, n := range names {
		fmt.Fprintf(&b, "%-9s %12.0f %6.1f%%  %s\n", n, float64(ns[n])/float64(updates), 100*float64(ns[n])/float64(total), what[n])
	}
	fmt.Fprintf(&b, "%-9s %12.0f %6.1f%%  CPU time of the process per update (%.1f ms in all)\n", "total", float64(total)/float64(updates), 100.0, float64(total)/1e6)
	return b.String()
}
