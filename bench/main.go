// Command bench runs github.com/acpclient/acp side by side with
// github.com/coder/acp-go-sdk and with a raw line-reading loop, on the same
// pre-rendered wire bytes written into an OS pipe by a subprocess (this
// binary re-executed as the writer). See README.md.
//
//	cd bench && go run . [-quick] [-reps N] [-only list] [-cpuprofile f] [-memprofile f]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	ours "github.com/acpclient/acp"
	ourschema "github.com/acpclient/acp/schema"
)

var (
	quick      = flag.Bool("quick", false, "fewer repetitions and smaller slow-consumer turns (~1 minute)")
	reps       = flag.Int("reps", 0, "repetitions of the throughput scenario (default 7, quick 3)")
	only       = flag.String("only", "", "comma-separated scenarios to run: turn,slow,burst,handshake,memory,scale,memrun (default all)")
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile = flag.String("memprofile", "", "write an allocation profile of the run to this file")
	protocol   = flag.String("protocol", "1,2", "comma-separated ACP protocol versions the turn scenario runs: 1 (rows A and B), 2 (row A2, the same turn in v2 form)")
)

func main() {
	if mode := os.Getenv(envMode); mode != "" {
		runWriter(mode)
		return
	}
	flag.Parse()
	if n, _ := strconv.Atoi(os.Getenv(envScale)); n > 0 {
		runScaleChild(n)
		return
	}
	if *reps <= 0 {
		*reps = 7
		if *quick {
			*reps = 3
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memprofile)
			if err != nil {
				fatal(err)
			}
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}()
	}
	fmt.Printf("acp bench: GOMAXPROCS=%d, %s %s/%s, %s\n", runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, cpuModel())
	start := time.Now()
	run := func(name string, f func()) {
		if *only == "" || slices.Contains(strings.Split(*only, ","), name) {
			f()
		}
	}
	run("turn", scenarioTurn)
	run("slow", scenarioSlow)
	run("burst", scenarioBurst)
	run("handshake", scenarioHandshake)
	run("memory", scenarioMemory)
	run("scale", scenarioScale)
	run("memrun", scenarioMemrun)
	fmt.Printf("\n# benchstat-compatible lines\n%s", bench.String())
	fmt.Printf("\ntotal %.1fs\n", time.Since(start).Seconds())
}

// protocols is the -protocol list.
func protocols() []string { return strings.Split(*protocol, ",") }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// bench collects benchstat lines.
var bench strings.Builder

func benchLine(name string, ns float64, metrics ...any) {
	fmt.Fprintf(&bench, "Benchmark%s-%d\t1\t%.0f ns/op", name, runtime.GOMAXPROCS(0), ns)
	for i := 0; i+1 < len(metrics); i += 2 {
		fmt.Fprintf(&bench, "\t%.4g %s", metrics[i], metrics[i+1])
	}
	bench.WriteByte('\n')
}

type stats struct{ med, min, max float64 }

func summarize(v []float64) stats {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stats{med, s[0], s[n-1]}
}

// measure runs f (which returns the number of updates it saw) between two
// MemStats reads and returns the rate and per-update costs.
type sample struct {
	ns                          float64
	updates                     int
	rate, allocsPerU, bytesPerU float64
}

func measure(f func() int) sample {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	n := f()
	d := time.Since(t0)
	runtime.ReadMemStats(&m1)
	return sample{
		ns:         float64(d.Nanoseconds()),
		updates:    n,
		rate:       float64(n) / d.Seconds(),
		allocsPerU: float64(m1.Mallocs-m0.Mallocs) / float64(max(n, 1)),
		bytesPerU:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(max(n, 1)),
	}
}

// ---- scenario: throughput of one 100 000-chunk + 1 000-tool-call turn ----

const turnChunks = 100_000

func scenarioTurn() {
	want := turnChunks + 2*(turnChunks/100)
	prompts := (want + groupSize - 1) / groupSize
	fmt.Printf("\n## turn: %d text chunks + %d tool calls (tool_call + tool_call_update) = %d updates, %d reps\n", turnChunks, turnChunks/100, want, *reps)
	fmt.Printf("   A: all in one turn;  B: the same bytes cut into %d turns of %d updates (coder/acp-go-sdk drops the connection when >1024 updates queue, so only B can measure it)\n", prompts, groupSize)
	type variant struct {
		name string
		run  func(mode string, prompts int) (sample, error)
	}
	variants := []variant{
		{"ours", func(mode string, prompts int) (sample, error) {
			o, err := oursConnect(mode, turnChunks)
			if err != nil {
				return sample{}, err
			}
			defer o.close()
			var werr error
			s := measure(func() int {
				n := 0
				for range prompts {
					t, err := o.s.Prompt(bg, ourschema.Text("go"))
					if err != nil {
						werr = err
						return n
					}
					if _, werr = t.Wait(); werr != nil {
						return n
					}
					n += turnUpdates(t)
				}
				return n
			})
			return s, werr
		}},
		{"coder", func(mode string, prompts int) (sample, error) {
			cl := &coderClient{}
			cc, err := coderConnect(mode, turnChunks, cl)
			if err != nil {
				return sample{}, err
			}
			defer cc.close()
			var werr error
			s := measure(func() int {
				for range prompts {
					if werr = cc.prompt(bg); werr != nil {
						break
					}
				}
				return int(cl.updates.Load())
			})
			return s, werr
		}},
		{"limit", func(mode string, prompts int) (sample, error) {
			rc, err := rawConnect(mode, turnChunks)
			if err != nil {
				return sample{}, err
			}
			defer rc.close()
			var werr error
			s := measure(func() int {
				n := 0
				for range prompts {
					m, err := rc.call("session/prompt", `{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}`)
					n += m
					if werr = err; err != nil {
						break
					}
				}
				return n
			})
			return s, werr
		}},
	}
	type key struct{ shape, name string }
	res := map[key][]sample{}
	shapes := []string{}
	if slices.Contains(protocols(), "1") {
		shapes = append(shapes, "A", "B")
	}
	for r := range *reps {
		for _, shape := range shapes {
			mode, np := "turn", 1
			if shape == "B" {
				mode, np = "turns", prompts
			}
			for _, v := range variants {
				if shape == "A" && v.name == "coder" && r > 0 {
					continue // it fails the same way every time
				}
				s, err := v.run(mode, np)
				if err != nil || s.updates != want {
					fmt.Printf("   rep %d %s %s: %d/%d updates delivered, error: %v\n", r, shape, v.name, s.updates, want, err)
					continue
				}
				res[key{shape, v.name}] = append(res[key{shape, v.name}], s)
				benchLine("Turn"+shape+"/"+v.name, s.ns, s.rate, "updates/s", s.allocsPerU, "allocs/update", s.bytesPerU, "B/update")
			}
		}
	}
	// A2: the same turn in v2 form, all in one turn (coder/acp-go-sdk is v1
	// only). Until our client speaks v2, its row says so.
	v2 := slices.Contains(protocols(), "2")
	v1only := false
	if v2 {
		shapes = append(shapes, "A2")
		variants = []variant{
			{"ours", func(string, int) (sample, error) {
				o, err := oursConnectV2("turn2", turnChunks)
				if err != nil {
					return sample{}, err
				}
				defer o.close()
				var werr error
				s := measure(func() int {
					t, err := o.s.Prompt(bg, ourschema.Text("go"))
					if err != nil {
						werr = err
						return 0
					}
					if _, werr = t.Wait(); werr != nil {
						return 0
					}
					return turnUpdates(t)
				})
				return s, werr
			}},
			{"limit", func(string, int) (sample, error) {
				rc, err := rawConnectV2("turn2", turnChunks)
				if err != nil {
					return sample{}, err
				}
				defer rc.close()
				var werr error
				s := measure(func() int {
					n, err := rc.promptV2()
					werr = err
					return n
				})
				return s, werr
			}},
		}
		for r := range *reps {
			for _, v := range variants {
				if v.name == "ours" && v1only {
					continue
				}
				s, err := v.run("turn2", 1)
				if errors.Is(err, errV1Only) {
					v1only = true
					continue
				}
				// Our count may include the v2 lifecycle (state updates,
				// the echoed user message): at most three more.
				if err != nil || s.updates < want || s.updates > want+3 {
					fmt.Printf("   rep %d A2 %s: %d/%d updates delivered, error: %v\n", r, v.name, s.updates, want, err)
					continue
				}
				res[key{"A2", v.name}] = append(res[key{"A2", v.name}], s)
				benchLine("TurnA2/"+v.name, s.ns, s.rate, "updates/s", s.allocsPerU, "allocs/update", s.bytesPerU, "B/update")
			}
		}
	}
	fmt.Printf("%-9s %12s %12s %12s %14s %10s\n", "", "updates/s", "min", "max", "allocs/update", "B/update")
	med := map[key]float64{}
	names := []string{"ours", "coder", "limit"}
	for _, shape := range shapes {
		for _, name := range names {
			if shape == "A2" && name == "coder" {
				continue
			}
			if shape == "A2" && name == "ours" && v1only {
				fmt.Printf("%-9s %12s\n", shape+" "+name, errV1Only.Error())
				continue
			}
			v := variant{name: name}
			k := key{shape, v.name}
			ss := res[k]
			if len(ss) == 0 {
				fmt.Printf("%-9s %12s\n", shape+" "+v.name, "failed")
				continue
			}
			var rate, al, by []float64
			for _, s := range ss {
				rate = append(rate, s.rate)
				al = append(al, s.allocsPerU)
				by = append(by, s.bytesPerU)
			}
			st := summarize(rate)
			med[k] = st.med
			fmt.Printf("%-9s %12.0f %12.0f %12.0f %14.2f %10.0f\n", shape+" "+v.name, st.med, st.min, st.max, summarize(al).med, summarize(by).med)
		}
	}
	ratio := func(a, b key) string {
		if med[a] == 0 || med[b] == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2fx", med[a]/med[b])
	}
	fmt.Printf("ours/coder (B) = %s   ours/limit (A) = %s   ours/limit (B) = %s\n",
		ratio(key{"B", "ours"}, key{"B", "coder"}), ratio(key{"A", "ours"}, key{"A", "limit"}), ratio(key{"B", "ours"}, key{"B", "limit"}))
	if v2 {
		// The bar: v2 throughput >= 0.9x v1, allocations no higher.
		fmt.Printf("ours v2/v1 (A2/A) = %s   limit v2/v1 (A2/A) = %s\n",
			ratio(key{"A2", "ours"}, key{"A", "ours"}), ratio(key{"A2", "limit"}, key{"A", "limit"}))
	}
}

// turnUpdates counts the turn's folded updates without a full snapshot
// (which would join the message text).
func turnUpdates(t *ours.Turn) int {
	n := 0
	for range t.Updates() {
		n++
	}
	return n
}

// ---- scenario: a consumer that takes 1 ms per update ----

func scenarioSlow() {
	const turns = 10
	n := 1500
	if *quick {
		n = 1100
	}
	fmt.Printf("\n## slow consumer: %d turns of %d chunks each, the consumer takes 1 ms per update\n", turns, n)
	// ours: the consumer ranges over Turn.Updates.
	func() {
		o, err := oursConnect("chunks", n)
		if err != nil {
			fatal(err)
		}
		defer o.close()
		completed, delivered := 0, 0
		t0 := time.Now()
		for range turns {
			t, err := o.s.Prompt(bg, ourschema.Text("go"))
			if err != nil {
				break
			}
			got := 0
			for range t.Updates() {
				time.Sleep(time.Millisecond)
				got++
			}
			delivered += got
			if _, err := t.Wait(); err == nil && got == n {
				completed++
			}
		}
		fmt.Printf("ours:  %2d/%d turns completed, %d/%d updates delivered (%.1fs)\n", completed, turns, delivered, turns*n, time.Since(t0).Seconds())
		benchLine("SlowConsumer/ours", float64(time.Since(t0).Nanoseconds()), float64(completed), "turns", float64(delivered), "updates")
	}()
	// coder: the SessionUpdate handler takes 1 ms.
	func() {
		cl := &coderClient{delay: time.Millisecond}
		cc, err := coderConnect("chunks", n, cl)
		if err != nil {
			fatal(err)
		}
		defer cc.close()
		completed := 0
		var firstErr error
		t0 := time.Now()
		for range turns {
			before := cl.updates.Load()
			ctx, cancel := context.WithTimeout(bg, 30*time.Second)
			err := cc.prompt(ctx)
			cancel()
			if err == nil && cl.updates.Load()-before == int64(n) {
				completed++
			} else if firstErr == nil && err != nil {
				firstErr = err
			}
		}
		msg := ""
		if firstErr != nil {
			msg = " — " + firstErr.Error()
		}
		fmt.Printf("coder: %2d/%d turns completed, %d/%d updates delivered (%.1fs)%s\n", completed, turns, cl.updates.Load(), turns*n, time.Since(t0).Seconds(), msg)
		benchLine("SlowConsumer/coder", float64(time.Since(t0).Nanoseconds()), float64(completed), "turns", float64(cl.updates.Load()), "updates")
	}()
}

// ---- scenario: a 100 000-update session/load replay ----

func scenarioBurst() {
	const n = 100_000
	runs := 3
	if *quick {
		runs = 1
	}
	fmt.Printf("\n## burst: session/load replays %d updates before its response, %d runs\n", n, runs)
	for _, name := range []string{"ours", "coder"} {
		completed := 0
		var times []float64
		var firstErr error
		for range runs {
			var got int
			var err error
			t0 := time.Now()
			switch name {
			case "ours":
				got, err = burstOurs(n)
			case "coder":
				got, err = burstCoder(n)
			}
			d := time.Since(t0)
			if err == nil && got == n {
				completed++
				times = append(times, d.Seconds())
			} else if firstErr == nil {
				firstErr = fmt.Errorf("%d/%d updates: %v", got, n, err)
			}
			benchLine("Burst/"+name, float64(d.Nanoseconds()), float64(got), "updates")
		}
		line := fmt.Sprintf("%-6s %d/%d loads completed with every update", name+":", completed, runs)
		if len(times) > 0 {
			st := summarize(times)
			line += fmt.Sprintf(", %.0f updates/s (median, spawn and handshake included)", n/st.med)
		}
		if firstErr != nil {
			line += " — first failure: " + firstErr.Error()
		}
		fmt.Println(line)
	}
}

func burstOurs(n int) (int, error) {
	// Outside keeps every replayed update only when the limit allows it.
	c, err := ours.Connect(bg, &ours.CommandTransport{Command: writerCmd("burst", n)},
		&ours.ClientOptions{Limits: ours.Limits{OutsideLog: n}})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	s, err := c.LoadSession(bg, &ourschema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp"})
	if err != nil {
		return 0, err
	}
	return len(s.State().Outside), nil
}

func burstCoder(n int) (int, error) {
	cl := &coderClient{}
	cc, err := coderConnectLoad("burst", n, cl)
	if err != nil {
		return int(cl.updates.Load()), err
	}
	defer cc.close()
	return int(cl.updates.Load()), nil
}

// ---- scenario: spawn → initialize → session/new ----

func scenarioHandshake() {
	runs := 20
	if *quick {
		runs = 8
	}
	fmt.Printf("\n## handshake: spawn → initialize → session/new, %d runs (bare = exec of the same binary that exits at once)\n", runs)
	times := map[string][]float64{}
	for range runs {
		runtime.GC()
		t0 := time.Now()
		if err := writerCmd("exit", 0).Run(); err != nil {
			fatal(err)
		}
		times["bare"] = append(times["bare"], float64(time.Since(t0).Microseconds())/1000)

		t0 = time.Now()
		o, err := oursConnect("handshake", 0)
		if err != nil {
			fatal(err)
		}
		times["ours"] = append(times["ours"], float64(time.Since(t0).Microseconds())/1000)
		o.close()

		t0 = time.Now()
		cc, err := coderConnect("handshake", 0, &coderClient{})
		if err != nil {
			fatal(err)
		}
		times["coder"] = append(times["coder"], float64(time.Since(t0).Microseconds())/1000)
		cc.close()
	}
	fmt.Printf("%-6s %9s %9s %9s %14s\n", "", "median", "min", "max", "median - bare")
	bare := summarize(times["bare"]).med
	for _, name := range []string{"bare", "ours", "coder"} {
		st := summarize(times[name])
		fmt.Printf("%-6s %7.2fms %7.2fms %7.2fms %+12.2fms\n", name, st.med, st.min, st.max, st.med-bare)
		for _, v := range times[name] {
			benchLine("Handshake/"+name, v*1e6)
		}
	}
}

// ---- scenario: peak memory for a 100 MB streamed message ----

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakDuring samples the live heap every millisecond while f runs and
// returns the high-water mark above the heap before f.
func peakDuring(f func()) uint64 {
	runtime.GC()
	base := heapObjects()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	sample := func() {
		v := heapObjects()
		for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
		}
	}
	go func() {
		defer close(done)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	sample()
	return peak.Load() - min(peak.Load(), base)
}

func scenarioMemory() {
	const n, size = 100_000, 1000
	text := float64(n * size)
	fmt.Printf("\n## memory: one %d MB message streamed in %d chunks; peak live heap above the baseline / message size\n", n*size/1_000_000, n)
	func() {
		o, err := oursConnect("stream", n)
		if err != nil {
			fatal(err)
		}
		defer o.close()
		var got int
		peak := peakDuring(func() {
			t, err := o.s.Prompt(bg, ourschema.Text("go"))
			if err != nil {
				fatal(err)
			}
			if _, err := t.Wait(); err != nil {
				fatal(err)
			}
			st := t.State() // the assembled message, as a UI would take it
			got = len(st.Messages[0].Text)
			runtime.KeepAlive(st)
		})
		fmt.Printf("ours:  %.2fx (%d MB peak; folded state with its update log, message text joined by State)\n", float64(peak)/text, peak>>20)
		if got != n*size {
			fmt.Printf("ours:  message is %d bytes, want %d\n", got, n*size)
		}
		benchLine("Memory100MB/ours", 0, float64(peak)/text, "peak/text")
	}()
	func() {
		// In one turn coder/acp-go-sdk drops the connection after ~1500
		// chunks; fed 1000 chunks per turn it gets the whole message.
		cl := &coderClient{text: &strings.Builder{}}
		cc, err := coderConnect("streamturns", n, cl)
		if err != nil {
			fatal(err)
		}
		defer cc.close()
		var got int
		peak := peakDuring(func() {
			for range n / groupSize {
				if err := cc.prompt(bg); err != nil {
					fmt.Printf("coder: %v\n", err)
					break
				}
			}
			cl.mu.Lock()
			got = cl.text.Len()
			cl.mu.Unlock()
		})
		fmt.Printf("coder: %.2fx (%d MB peak; in %d turns of %d chunks, the handler appends each chunk to a strings.Builder)\n", float64(peak)/text, peak>>20, n/groupSize, groupSize)
		if got != n*size {
			fmt.Printf("coder: message is %d bytes, want %d\n", got, n*size)
		}
		benchLine("Memory100MB/coder", 0, float64(peak)/text, "peak/text")
	}()
}
