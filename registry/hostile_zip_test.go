package registry

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// rawZip is a zip of n empty entries named "a" with its end records
// claiming claim entries (zip64 records when claim does not fit 16 bits)
// and a directory of claimSize bytes (0: the true size).
// It holds only the central directory, which is all archive/zip reads
// when opening: 47 bytes an entry.
func rawZip(n int, claim, claimSize uint64) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	for range n {
		var h [46]byte
		copy(h[:], zipDirHeaderSig)
		le.PutUint16(h[4:], 20)
		le.PutUint16(h[6:], 20)
		le.PutUint16(h[28:], 1) // name length
		b.Write(h[:])
		b.WriteString("a")
	}
	dirSize := uint64(b.Len())
	if claimSize != 0 {
		dirSize = claimSize
	}
	records16, size32, offset32 := uint16(claim), uint32(dirSize), uint32(0)
	if claim >= 0xffff {
		end64 := uint64(b.Len()) // the directory starts at 0
		var r [56]byte
		copy(r[:], zipDir64EndSig)
		le.PutUint64(r[4:], 44)
		le.PutUint64(r[24:], claim)
		le.PutUint64(r[32:], claim)
		le.PutUint64(r[40:], dirSize)
		le.PutUint64(r[48:], 0)
		b.Write(r[:])
		var l [20]byte
		copy(l[:], zipDir64LocSig)
		le.PutUint64(l[8:], end64)
		le.PutUint32(l[16:], 1)
		b.Write(l[:])
		records16, size32, offset32 = 0xffff, 0xffffffff, 0xffffffff
	}
	var e [22]byte
	copy(e[:], zipDirEndSig)
	le.PutUint16(e[8:], records16)
	le.PutUint16(e[10:], records16)
	le.PutUint32(e[12:], size32)
	le.PutUint32(e[16:], offset32)
	b.Write(e[:])
	return b.Bytes()
}

// unpackZip unpacks data as a zip with these limits, returning the bytes
// allocated meanwhile and the error.
func unpackZip(t *testing.T, data []byte, maxEntries int) (uint64, error) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "a.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	o := (&Options{MaxArchiveEntries: maxEntries}).withDefaults()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = unpack(context.Background(), f, formatZip, "tool", out, o)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// A small archive whose end records claim 11 million entries is refused
// from those records, before archive/zip reads anything of it.
func TestHostileZipClaimsManyEntries(t *testing.T) {
	for _, claim := range []uint64{11_000_000, 1 << 62} {
		_, err := unpackZip(t, rawZip(1, claim, 0), DefaultMaxArchiveEntries)
		if !errors.Is(err, schema.ErrLimitExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("claims %d entries", claim)) {
			t.Fatalf("claim %d: got %v, want a refusal naming the claim", claim, err)
		}
		checkPrefix(t, err)
	}
}

// An archive whose directory holds more entries than it claims (archive/zip
// compares only the low 16 bits of the count) is refused while its
// directory is walked, without archive/zip loading it: 200 000 entries
// against a limit of 1 000 allocate a small fraction of what loading them
// would (about 60 MB). The end record claims 10 entries (196 618 mod
// 65 536) and 470 bytes, so only the walk finds them.
func TestHostileZipManyEntriesBeforeLoading(t *testing.T) {
	const n = 3*65536 + 10
	alloc, err := unpackZip(t, rawZip(n, 10, 470), 1000)
	t.Logf("%d entries, limit 1000: %v; %.1f MiB allocated", n, err, float64(alloc)/(1<<20))
	if !errors.Is(err, schema.ErrLimitExceeded) || !strings.Contains(err.Error(), "has more than MaxArchiveEntries (1000) entries") {
		t.Fatalf("got %v, want the entry limit", err)
	}
	checkPrefix(t, err)
	if alloc > 8<<20 {
		t.Errorf("%d bytes allocated refusing it: the directory was loaded", alloc)
	}
}

// A real zip (written by archive/zip) with one entry over the limit is
// refused; one at the limit installs.
func TestHostileZipEntriesJustOverLimit(t *testing.T) {
	var entries []entry
	for i := range 10 {
		entries = append(entries, entry{name: fmt.Sprintf("bin/f%d", i), body: "x"})
	}
	entries[0].name = "bin/tool"
	at := zipOf(t, entries...)
	over := zipOf(t, append(entries, entry{name: "bin/extra", body: "x"})...)
	if _, err := unpackZip(t, at, 10); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := unpackZip(t, over, 10)
	if !errors.Is(err, schema.ErrLimitExceeded) || !strings.Contains(err.Error(), "MaxArchiveEntries (10)") {
		t.Fatalf("over the limit: %v", err)
	}
}

// A directory of long names is bounded by MaxArchiveEntries × 512 bytes
// even when the entry count is within the limit; the claimed size is
// refused, and a directory larger than claimed is refused by the walk.
func TestHostileZipLongNames(t *testing.T) {
	var entries []entry
	for i := range 20 {
		entries = append(entries, entry{name: fmt.Sprintf("%d/%s", i, strings.Repeat("n", 4000)), body: "x"})
	}
	_, err := unpackZip(t, zipOf(t, entries...), 100) // 51 200 bytes of directory allowed
	if !errors.Is(err, schema.ErrLimitExceeded) || !strings.Contains(err.Error(), "more than 51200 bytes") {
		t.Fatalf("got %v, want the directory bound", err)
	}
	lying := zipOf(t, entries...)
	binary.LittleEndian.PutUint32(lying[len(lying)-10:], 470) // the end record's directory size
	_, err = unpackZip(t, lying, 100)
	if !errors.Is(err, schema.ErrLimitExceeded) || !strings.Contains(err.Error(), "directory is larger than 51200 bytes") {
		t.Fatalf("got %v, want the walk's directory bound", err)
	}
}
