package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var (
	memrunReps   = flag.Int("memrun-reps", 5, "memrun: runs of each client (interleaved)")
	memrunChunks = flag.Int("memrun-chunks", 100000, "memrun: agent_message_chunk notifications in the turn")
	memrunEnv    = flag.String("memrun-env", "", "memrun: an environment setting (say, GOGC=100) the acp command is run with as two more clients, interleaved with the others: with → without in one run")
	memrunBefore = flag.String("memrun-before", "", "memrun: another build of the acp command (say, of the commit before a change), run as two more clients interleaved with the others: before → after in one run")
)

// sampleEvery is how often a client's VmHWM is read where it cannot be
// read at its exit (memrun_linux.go).
const sampleEvery = time.Millisecond

// memrunClient is one client of the memrun scenario: argv before the
// agent command, which is appended after "--".
type memrunClient struct {
	name string
	argv []string
	env  []string // added to the harness's environment
}

type memrunResult struct {
	peakKB  float64 // the client's own VmHWM (see runOwnPeak)
	exact   bool    // peakKB read at the exit stop, not sampled
	selfKB  float64 // the client's own report, 0 when it made none
	wait4KB float64 // wait4's ru_maxrss, shown, never used
	agentKB float64 // the agent's VmHWM, 0 when it did not report
	stdout  int64
	wall    time.Duration
}

// scenarioMemrun measures the peak RSS and the wall time of four clients
// (five rows: the TypeScript client both printing and accumulating)
// driving the same fast agent (./fastagent) through one turn of
// -memrun-chunks small chunks. Each client spawns the agent itself, as a
// real client does, so a wall time is the client's start, handshake and
// turn, the agent's included: the floor's is what the agent and the pipe
// cost, and a client's ratio to it is what the client adds.
//
// The memory figure is each client's own VmHWM, read by runOwnPeak from
// /proc/<pid>/status at the client's exit (see memrun_linux.go). It is
// never wait4's ru_maxrss (what /usr/bin/time -f %M prints), which is the
// largest of the client's peak, its reaped children's (the agent's) and
// the RSS peak of the process that spawned it: exec carries the spawning
// address space's high-water mark over as the new program's starting
// maximum, and Go spawns with CLONE_VM|CLONE_VFORK, so after the sections
// that run in this harness (the memory section holds hundreds of MB) every
// client's wait4 figure was the harness's. wait4's column is printed to
// show that, next to the agent's and the clients' own reports (the floor
// reports VmHWM, the TypeScript client process.resourceUsage().maxRSS,
// which is getrusage's and inherits the same way). Runs are interleaved
// (client 1..5, then again) so a change in the machine's load spreads
// over all clients.
func scenarioMemrun() {
	fmt.Printf("\n== memrun: peak RSS and wall time of clients driving one %d-chunk turn (%d runs each, interleaved)\n", *memrunChunks, *memrunReps)
	if _, err := os.Stat("../examples/acp"); err != nil {
		fatal(fmt.Errorf("memrun: run it from bench/ (needs ../examples/acp): %w", err))
	}
	dir, err := os.MkdirTemp("", "acp-memrun-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	build := func(wd, out, pkg string) string {
		bin := filepath.Join(dir, out)
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = wd, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fatal(fmt.Errorf("memrun: go build %s: %w", pkg, err))
		}
		return bin
	}
	agent := build(".", "fastagent", "./fastagent")
	floor := build(".", "memfloor", "./memfloor")
	acpBin := build("..", "acp", "./examples/acp")
	prompt := fmt.Sprintf("stream %d", *memrunChunks)
	clients := []memrunClient{
		{name: "newline floor (Go, counts lines)", argv: []string{floor, "-p", prompt}},
		{name: "acp (text)", argv: []string{acpBin, "-p", prompt}},
		{name: "acp --json", argv: []string{acpBin, "--json", "-p", prompt}},
	}
	if *memrunBefore != "" {
		// Appended after the three above, so med[1] and med[2] stay the
		// current build's in the ratios below.
		clients = append(clients,
			memrunClient{name: "acp (text), -memrun-before", argv: []string{*memrunBefore, "-p", prompt}},
			memrunClient{name: "acp --json, -memrun-before", argv: []string{*memrunBefore, "--json", "-p", prompt}})
	}
	node, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat("../interop/tsagent/node_modules/@agentclientprotocol/sdk/package.json")
	switch {
	case nodeErr != nil:
		fmt.Println("   (TypeScript client skipped: no node in PATH)")
	case sdkErr != nil:
		fmt.Println("   (TypeScript client skipped: run `npm ci` in interop/tsagent)")
	default:
		script, _ := filepath.Abs("tsclient/client.mjs")
		clients = append(clients,
			memrunClient{name: "TS SDK 2.4.0, prints chunks", argv: []string{node, script, "-p", prompt}},
			memrunClient{name: "TS SDK 2.4.0, accumulates text", argv: []string{node, script, "--accumulate", "-p", prompt}})
	}
	envAt := len(clients) // where the -memrun-env rows are, if any
	if *memrunEnv != "" {
		if !strings.Contains(*memrunEnv, "=") {
			fatal(fmt.Errorf("memrun: -memrun-env %q is not NAME=VALUE", *memrunEnv))
		}
		env := []string{*memrunEnv}
		clients = append(clients,
			memrunClient{"acp (text), " + *memrunEnv, []string{acpBin, "-p", prompt}, env},
			memrunClient{"acp --json, " + *memrunEnv, []string{acpBin, "--json", "-p", prompt}, env})
	}
	// The text floor goes last, so that the rows the ratio lines index
	// above keep their places.
	textAt := len(clients)
	clients = append(clients, memrunClient{name: "text floor (Go, Peek, prints)", argv: []string{floor, "-text", "-p", prompt}})
	harness := selfVmHWM()
	results := make([][]memrunResult, len(clients))
	for range *memrunReps {
		for i, c := range clients {
			results[i] = append(results[i], memrunOnce(dir, c, agent))
		}
	}
	fmt.Printf("   %-32s %10s %19s %10s %10s %10s %10s %8s %15s\n", "client", "own peak", "range", "self-rep", "wait4", "agent", "stdout B", "wall ms", "range")
	med := make([]float64, len(clients))
	wallMed := make([]float64, len(clients))
	sampled := false
	for i, c := range clients {
		var peak, self, w4, ag, wall []float64
		for _, r := range results[i] {
			peak, w4, ag, wall = append(peak, r.peakKB), append(w4, r.wait4KB), append(ag, r.agentKB), append(wall, r.wall.Seconds())
			if r.selfKB > 0 {
				self = append(self, r.selfKB)
			}
			sampled = sampled || !r.exact
		}
		p, w := summarize(peak), summarize(wall)
		med[i], wallMed[i] = p.med, w.med
		selfCol := "—"
		if len(self) > 0 {
			selfCol = fmt.Sprintf("%.1f", summarize(self).med/1000)
		}
		fmt.Printf("   %-32s %10.1f %8.1f – %-8.1f %10s %10.1f %10.1f %10d %8.1f %6.1f – %-6.1f\n", c.name, p.med/1000, p.min/1000, p.max/1000,
			selfCol, summarize(w4).med/1000, summarize(ag).med/1000, results[i][0].stdout, w.med*1000, w.min*1000, w.max*1000)
		benchLine("Memrun/"+strings.NewReplacer(" ", "_", ",", "", "(", "", ")", "").Replace(c.name), w.med*1e9, p.med*1000, "peak-RSS-B")
	}
	for _, col := range []struct {
		label string
		v     []float64
	}{{"own peak", med}, {"wall", wallMed}} {
		line := memrunRatios(col.label, col.v[:envAt], *memrunBefore != "")
		if *memrunEnv != "" {
			line += fmt.Sprintf(", %s/without text %.2f×, --json %.2f×", *memrunEnv, col.v[envAt]/col.v[1], col.v[envAt+1]/col.v[2])
		}
		line += fmt.Sprintf(", text floor/floor %.2f×, acp/text floor %.2f×", col.v[textAt]/col.v[0], col.v[1]/col.v[textAt])
		fmt.Println("   " + line)
	}
	how := "read from /proc/<pid>/status at the client's exit stop (ptrace)"
	if sampled {
		how = "sampled from /proc/<pid>/status every " + sampleEvery.String() + " (ptrace refused here): a lower bound"
	}
	fmt.Printf("   own peak: the client's own VmHWM (median, MB = kB/1000), %s\n", how)
	fmt.Println("   text floor: the newline floor that also validates each line (jsonscan.Peek, the acp command's scanner) and prints the text chunks' text, with no state and no other goroutine")
	fmt.Println("   wall: from spawning the client to its exit and the end of its output (it spawns the agent, whose time is inside), median of the interleaved runs")
	fmt.Println("   self-rep: the client's own report (floor: VmHWM; TS: process.resourceUsage().maxRSS, which inherits like wait4); agent: the agent's VmHWM")
	fmt.Printf("   wait4: ru_maxrss, not used: max of the client's, the agent's and the spawner's peak (this harness's VmHWM when memrun began: %.1f MB)\n", harness/1000)
}

// memrunRatios is the ratio line of one column of medians v, in the
// order scenarioMemrun lists its clients: the floor, acp text, acp --json,
// then with before the two -memrun-before rows, then the TypeScript
// client's two rows when node ran them. Every ratio is of medians of the
// same run.
func memrunRatios(label string, v []float64, before bool) string {
	r := func(a, b int) string { return fmt.Sprintf("%.2f×", v[a]/v[b]) }
	s := label + ": acp/floor " + r(1, 0) + ", acp --json/floor " + r(2, 0)
	ts := 3
	if before {
		s += ", after/before text " + r(1, 3) + ", --json " + r(2, 4)
		ts = 5
	}
	if len(v) > ts+1 {
		s += ", TS prints/acp " + r(ts, 1) + ", TS prints/acp --json " + r(ts, 2) + ", TS accumulates/acp " + r(ts+1, 1)
	}
	return s
}

// memrunOnce runs one client against the agent and returns its peak.
func memrunOnce(dir string, c memrunClient, agent string) memrunResult {
	hwm := filepath.Join(dir, "hwm")
	os.Remove(hwm)
	argv := append(append([]string{}, c.argv...), "--", agent)
	var out countWriter
	var stderr bytes.Buffer
	t0 := time.Now()
	env := append(append(os.Environ(), c.env...), "ACP_MEMRUN_HWM="+hwm)
	own, err := runOwnPeak(argv, env, &out, &stderr)
	if err != nil {
		fatal(fmt.Errorf("memrun: %s: %w\n%s", c.name, err, stderr.Bytes()))
	}
	r := memrunResult{stdout: out.n, wall: time.Since(t0), peakKB: own.hwmKB, exact: own.exact, wait4KB: own.wait4KB}
	b, _ := os.ReadFile(hwm)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		kb, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "agent":
			r.agentKB = kb
		case "self":
			r.selfKB = kb
		}
	}
	if r.peakKB == 0 { // no /proc: the process's own report is all there is
		r.peakKB = r.selfKB
	}
	return r
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
