package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	ours "github.com/acpclient/acp"
	ourschema "github.com/acpclient/acp/schema"
)

// ---- scenario: many agents in one process ----
//
// Each agent count runs in a fresh process (this binary re-executed with
// envScale set), so that peak RSS and thread counts of one size do not
// carry over to the next. The child connects N clients, each with its own
// writer agent ("tiny" mode: it renders its chunks on the fly, so the
// agents stay small), opens one session each, measures the idle host, runs
// one turn of scaleUpdates updates on every client at once, measures again,
// and prints one line of key=value pairs that the parent tabulates.

var (
	scaleAgents  = flag.String("agents", "1,100,500", "scale: comma-separated agent counts")
	scaleUpdates = flag.Int("scale-updates", 10_000, "scale: updates in each agent's turn")
)

const envScale = "ACP_BENCH_SCALE"

func scenarioScale() {
	fmt.Printf("\n## scale: N agents in one process, one session and one %d-update turn each\n", *scaleUpdates)
	fmt.Printf("   per agent = (value with N agents - value before connecting) / N; RSS idle after a GC; the turn runs on all agents at once\n")
	fmt.Printf("   RSS: the measuring process's own VmRSS, peak its own VmHWM (/proc/self/status of a fresh process per row, whose high-water mark starts at its exec)\n")
	fmt.Printf("   RSS turn: after the turns, a GC and FreeOSMemory (what the folded turns keep); peak/turn: RSS peak over it; B/upd: heap bytes allocated during the turns per update\n")
	fmt.Printf("%7s %8s %8s %8s %8s %8s %10s %10s %10s %10s %9s %7s %12s\n", "agents", "threads", "thr/agt", "gor/agt", "proc/agt", "fds/agt", "RSS idle", "KB/agt", "RSS turn", "RSS peak", "peak/turn", "B/upd", "updates/s")
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	for _, f := range strings.Split(*scaleAgents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fatal(fmt.Errorf("bad -agents entry %q", f))
		}
		cmd := exec.Command(self, "-scale-updates", strconv.Itoa(*scaleUpdates))
		cmd.Env = append(os.Environ(), envScale+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			fmt.Printf("%7d failed: %v\n", n, err)
			continue
		}
		m := map[string]float64{}
		for _, kv := range strings.Fields(string(bytes.TrimSpace(out))) {
			k, v, _ := strings.Cut(kv, "=")
			m[k], _ = strconv.ParseFloat(v, 64)
		}
		per := func(k string) float64 { return (m[k] - m["base_"+k]) / float64(n) }
		fmt.Printf("%7d %8.0f %8.2f %8.2f %8.2f %8.2f %8.1fMB %10.0f %8.1fMB %8.1fMB %8.2f× %7.0f %12.0f\n", n,
			m["threads"], per("threads"), per("goroutines"), per("procs"), per("fds"),
			m["rss"]/1024, per("rss"), m["turn_rss"]/1024, m["peak_rss"]/1024, m["peak_rss"]/m["turn_rss"],
			m["alloc_bytes"]/float64(n**scaleUpdates), m["rate"])
		benchLine("Scale/agents="+strconv.Itoa(n), m["turn_ns"], per("threads"), "threads/agent", per("goroutines"), "goroutines/agent",
			per("procs"), "procs/agent", per("fds"), "fds/agent", per("rss"), "KB-idle/agent", m["peak_rss"]/1024, "MB-peak", m["peak_rss"]/m["turn_rss"], "peak/turn", m["rate"], "updates/s")
	}
}

// runScaleChild is the measuring process for n agents.
func runScaleChild(n int) {
	out := map[string]float64{}
	var keys []string
	put := func(k string, v float64) {
		if _, ok := out[k]; !ok {
			keys = append(keys, k)
		}
		out[k] = v
	}
	snap := func(prefix string) {
		settle()
		st := procStatus()
		put(prefix+"threads", st["Threads"])
		put(prefix+"rss", st["VmRSS"])
		put(prefix+"goroutines", float64(runtime.NumGoroutine()))
		put(prefix+"procs", float64(descendants()))
		fds, _ := os.ReadDir("/proc/self/fd")
		put(prefix+"fds", float64(len(fds)))
	}
	snap("base_")
	conns := make([]*oursConn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := oursConnect("tiny", *scaleUpdates)
			if err != nil {
				errs <- err
				return
			}
			conns[i] = o
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		fatal(fmt.Errorf("connecting: %w", err))
	}
	snap("")
	if f := os.Getenv("ACP_BENCH_IDLEPROFILE"); f != "" {
		if w, err := os.Create(f); err == nil {
			_ = pprof.Lookup("heap").WriteTo(w, 0)
			w.Close()
		}
	}
	if os.Getenv("ACP_BENCH_GOROUTINES") != "" {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}

	m := measureTurns(n, func(i int) *ours.Turn {
		t, err := conns[i].s.Prompt(bg, ourschema.Text("go"))
		if err != nil {
			fatal(err)
		}
		if _, err := t.Wait(); err != nil {
			fatal(err)
		}
		return t
	}, func() float64 { return procStatus()["VmHWM"] }, turnUpdates)
	d, before, after, total := m.d, m.before, m.after, m.total
	put("peak_rss", m.peakKB)
	if want := n * *scaleUpdates; total != want {
		fatal(fmt.Errorf("%d of %d updates delivered", total, want))
	}
	put("turn_ns", float64(d.Nanoseconds()))
	put("alloc_bytes", float64(after[0]-before[0]))
	put("allocs", float64(after[1]-before[1]))
	put("gcs", float64(after[2]-before[2]))
	put("live_end", float64(after[3]))
	put("rate", float64(total)/d.Seconds())
	snap("turn_")
	if f := os.Getenv("ACP_BENCH_HEAPPROFILE"); f != "" {
		if w, err := os.Create(f); err == nil {
			_ = pprof.Lookup("heap").WriteTo(w, 0)
			w.Close()
		}
	}
	for _, o := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); o.close() }()
	}
	wg.Wait()
	for _, k := range keys {
		fmt.Printf("%s=%g ", k, out[k])
	}
	fmt.Println()
}

// settle lets the connections go idle: goroutines park, garbage is
// collected and returned to the OS, so RSS is what idle connections hold.
func settle() {
	time.Sleep(200 * time.Millisecond) // a measurement pause, not synchronization
	runtime.GC()
	debug.FreeOSMemory()
}

// procStatus reads the numeric fields of /proc/self/status (kB for sizes).
func procStatus() map[string]float64 {
	b, _ := os.ReadFile("/proc/self/status")
	m := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) > 0 {
			m[k], _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}

// descendants counts the processes whose parent is this one (agents and
// their watchdogs).
func descendants() int {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); i >= 0 && len(f) > 1 && f[1] == self {
			n++
		}
	}
	return n
}

// turnsMeasure is what measureTurns measured.
type turnsMeasure struct {
	d             time.Duration // from the first prompt to the last turn's end
	before, after [4]uint64     // heapCounters around the turns
	peakKB        float64       // the process's VmHWM when the turns had ended
	total         int           // updates counted after that
}

// measureTurns runs turn(0) .. turn(n-1) at once, each on its own
// goroutine, and reads the heap counters and peak() when all have ended;
// only then does it count what each delivered, one turn at a time. Counting
// replays a turn's log (every text chunk made again as an update, the whole
// turn in one batch): that is the harness's work, not the agents' cost, and
// done as each turn ended, while the others still ran, it was most of what
// the process allocated during the turns, so it set the peak.
func measureTurns[T any](n int, turn func(i int) T, peak func() float64, count func(T) int) turnsMeasure {
	var m turnsMeasure
	turns := make([]T, n)
	var wg sync.WaitGroup
	m.before = heapCounters()
	start := time.Now()
	for i := range n {
		wg.Go(func() { turns[i] = turn(i) })
	}
	wg.Wait()
	m.d = time.Since(start)
	m.after = heapCounters()
	m.peakKB = peak()
	for _, t := range turns {
		m.total += count(t)
	}
	return m
}

// heapCounters reads the heap's cumulative allocated bytes and objects,
// completed GC cycles, and the live heap of the last cycle.
func heapCounters() [4]uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return [4]uint64{s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()}
}
