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
)

// memrunClient is one client of the memrun scenario: argv before the
// agent command, which is appended after "--".
type memrunClient struct {
	name string
	argv []string
}

type memrunResult struct {
	peakKB, wait4KB, agentKB float64 // agentKB 0 when the agent did not report
	selfReported             bool
	stdout                   int64
	wall                     time.Duration
}

// scenarioMemrun measures the peak RSS of four clients (five rows: the
// TypeScript client both printing and accumulating) driving the same fast
// agent (./fastagent) through one turn of -memrun-chunks small chunks.
// Each client spawns the agent itself, as a real client does, so wait4's
// ru_maxrss (what /usr/bin/time -f %M prints) is the maximum of the
// client's peak, the agent's, and this harness's RSS when it spawned the
// client (Go spawns with a vfork-like clone, and exec records the shared
// mm's high-water mark as the new program's starting maximum). The agent
// reports its own VmHWM so a reader can see which one a figure is; the
// floor and the TypeScript client report their own peak (VmHWM,
// process.resourceUsage), and that is the figure used for them. The acp
// command's is wait4's, well above both bounds. Runs are interleaved (client 1..5, then again) so a
// change in the machine's load spreads over all clients.
func scenarioMemrun() {
	fmt.Printf("\n== memrun: peak RSS of clients driving one %d-chunk turn (%d runs each, interleaved)\n", *memrunChunks, *memrunReps)
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
		{"newline floor (Go, counts lines)", []string{floor, "-p", prompt}},
		{"acp (text)", []string{acpBin, "-p", prompt}},
		{"acp --json", []string{acpBin, "--json", "-p", prompt}},
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
			memrunClient{"TS SDK 2.4.0, prints chunks", []string{node, script, "-p", prompt}},
			memrunClient{"TS SDK 2.4.0, accumulates text", []string{node, script, "--accumulate", "-p", prompt}})
	}
	results := make([][]memrunResult, len(clients))
	for range *memrunReps {
		for i, c := range clients {
			results[i] = append(results[i], memrunOnce(dir, c, agent))
		}
	}
	fmt.Printf("   %-32s %10s %19s %10s %10s %10s %8s\n", "client", "peak MB", "range", "wait4 MB", "agent MB", "stdout B", "wall s")
	med := make([]float64, len(clients))
	for i, c := range clients {
		var peak, w4, ag, wall []float64
		self := false
		for _, r := range results[i] {
			peak, w4, ag, wall = append(peak, r.peakKB), append(w4, r.wait4KB), append(ag, r.agentKB), append(wall, r.wall.Seconds())
			self = self || r.selfReported
		}
		p := summarize(peak)
		med[i] = p.med
		note := ""
		if self {
			note = " (own VmHWM)"
		}
		fmt.Printf("   %-32s %10.1f %8.1f – %-8.1f %10.1f %10.1f %10d %8.2f%s\n", c.name, p.med/1000, p.min/1000, p.max/1000,
			summarize(w4).med/1000, summarize(ag).med/1000, results[i][0].stdout, summarize(wall).med, note)
		benchLine("Memrun/"+strings.NewReplacer(" ", "_", ",", "", "(", "", ")", "").Replace(c.name), summarize(wall).med*1e9, p.med*1000, "peak-RSS-B")
	}
	fmt.Printf("   acp/floor %.2f×, acp --json/floor %.2f×", med[1]/med[0], med[2]/med[0])
	if len(med) > 3 {
		fmt.Printf(", TS prints/acp %.2f×, TS accumulates/acp %.2f×", med[3]/med[1], med[4]/med[1])
	}
	fmt.Println()
	fmt.Println("   peak: wait4's ru_maxrss (what /usr/bin/time -f %M prints), or the client's own VmHWM where it reports one; MB = KiB/1000")
	fmt.Println("   wait4's figure is at least the agent's peak and this harness's RSS when it spawned the client (exec keeps the old mm's high-water mark)")
}

// memrunOnce runs one client against the agent and returns its peak.
func memrunOnce(dir string, c memrunClient, agent string) memrunResult {
	hwm := filepath.Join(dir, "hwm")
	os.Remove(hwm)
	argv := append(append([]string{}, c.argv...), "--", agent)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "ACP_MEMRUN_HWM="+hwm)
	var out countWriter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("memrun: %s: %w\n%s", c.name, err, stderr.Bytes()))
	}
	r := memrunResult{stdout: out.n, wall: time.Since(t0)}
	r.wait4KB = maxRSSKB(cmd.ProcessState)
	r.peakKB = r.wait4KB
	b, _ := os.ReadFile(hwm)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		kb, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "agent":
			r.agentKB = kb
		case "self":
			r.peakKB, r.selfReported = kb, true
		}
	}
	if !r.selfReported && r.agentKB >= r.wait4KB {
		fmt.Printf("   warning: %s: wait4's peak %.0f kB is the agent's (%.0f kB), not the client's\n", c.name, r.wait4KB, r.agentKB)
	}
	return r
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
