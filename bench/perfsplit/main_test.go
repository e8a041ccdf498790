// main_test.go checks perfsplit's reading of perf script and its split.
package main

import (
	"strings"
	"testing"
)

// script is perf script -F comm,period,ip,sym as perf 6 writes it: an
// indented header, tab-indented frames leaf first, kernel frames above
// the Go code that made the system call, a blank line after each sample.
const script = `         acp-new     250000 
	ffffffff81348955 vfs_write
	ffffffff8225a101 do_syscall_64
	          4a1b2c syscall.write
	          4a1b00 os.(*File).Write
	          5b0000 main.(*liveWriter).flushLocked

         acp-new     250000 
	          5c0000 github.com/acpclient/acp/internal/jsonscan.(*peeker).key
	          5c0100 github.com/acpclient/acp/internal/jsonscan.Peek
	          5c0200 github.com/acpclient/acp/internal/engine.(*Wire).Dispatch

         acp-new     500000 
	          6c0000 runtime.mallocgcSmallScanNoHeader
	          6c0100 runtime.mallocgc
	          6c0200 github.com/acpclient/acp.newTextChunk
	          6c0300 main.runTurn.func1

         acp-new     250000 
	          6c0000 runtime.scanObject
	          6c0100 runtime.gcDrain
	          6c0200 runtime.gcBgMarkWorker

       fastagent     250000 
	          700000 fmt.Fprintf

         acp-new     250000 
	ffffffff815a5003 filemap_map_pages
`

func TestSplit(t *testing.T) {
	got := map[string]int64{}
	var n int
	err := parse(strings.NewReader(script), func(s sample) {
		n++
		if s.comm == "acp-new" {
			got[classify(s.syms)] += s.period
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("%d samples read, want 6", n)
	}
	want := map[string]int64{"write": 250000, "scan": 250000, "feed": 500000, "gc": 250000, "other": 250000}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d ns, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	tab := table(got, 1500000, 1000)
	rows := map[string]string{}
	for _, l := range strings.Split(tab, "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			rows[f[0]] = f[1] + " " + f[2]
		}
	}
	if rows["feed"] != "500 33.3%" || rows["total"] != "1500 100.0%" || rows["read"] != "0 0.0%" {
		t.Errorf("table:\n%s", tab)
	}
}
