package workspace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// allTmpFiles lists temporary files left anywhere under dir.
func allTmpFiles(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".acp-tmp-") {
			left = append(left, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// A parent directory replaced by a symlink out of the root while a write
// is under way: the write completes in, or is cleaned up from, the
// directory it started in; nothing leaks out of the root and no temporary
// file is left behind.
func TestWriteTextFileParentSwappedMidWrite(t *testing.T) {
	errDisk := errors.New("disk on fire")
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "write completes", true: "write fails"}[fail]
		t.Run(name, func(t *testing.T) {
			e := newFSEnv(t)
			dir := filepath.Join(e.root, "pkg")
			mustMkdir(t, dir)
			before := e.snapshotOutside(t)
			w := &FS{Roots: []string{e.root}}
			w.wrapWriter = func(f io.Writer) io.Writer {
				// The temporary file exists; swap its directory away.
				if err := os.Rename(dir, dir+"-old"); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, e.outside, dir)
				if fail {
					return &failingWriter{w: f, n: 3, err: errDisk}
				}
				return f
			}
			_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: dir + "/d.txt", Content: "new\n"})
			if fail {
				wantCode(t, err, schema.CodeInternalError)
			} else {
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				// The write lands in the directory the path named when
				// the write began.
				if got := readFile(t, dir+"-old/d.txt"); got != "new\n" {
					t.Errorf("content = %q", got)
				}
			}
			if left := allTmpFiles(t, e.base); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			if _, err := os.Lstat(filepath.Join(e.outside, "d.txt")); err == nil {
				t.Error("the write went out of the root")
			}
			after := e.snapshotOutside(t)
			delete(after, dir) // the symlink the test planted
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("outside the root changed (-before +after):\n%s", diff)
			}
		})
	}
}

// sparseFile makes a file that starts with text lines and continues, with
// no further newline, up to size bytes of a hole (NUL bytes that take no
// disk space).
func sparseFile(t *testing.T, p string, size int64) string {
	t.Helper()
	head := strings.Repeat("a line of text\n", 1000) // past the binary sniff
	mustWrite(t, p, head)
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return head
}

// cancelAfter is a context that reports cancellation from the (after+1)-th
// call of Err on, so a test can cancel a read while it scans without a
// timing race.
type cancelAfter struct {
	context.Context
	calls, after int32
	mu           sync.Mutex
}

func (c *cancelAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls > c.after {
		return context.Canceled
	}
	return nil
}

// A read scanning for a far line stops when its request is withdrawn,
// even in the middle of one enormous line.
func TestReadTextFileStopsOnCancel(t *testing.T) {
	e := newFSEnv(t)
	p := filepath.Join(e.root, "sparse.txt")
	sparseFile(t, p, 1<<30)
	w := &FS{Roots: []string{e.root}, MaxScanBytes: 1 << 40}
	// The read checks once before it starts scanning; cancel right after.
	ctx := &cancelAfter{Context: context.Background(), after: 1}
	_, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: p, Line: u32(1 << 30)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read of a withdrawn request = %v, want context.Canceled", err)
	}
	if ctx.calls > 3 {
		t.Errorf("the read went on checking the context %d times after it was cancelled", ctx.calls-ctx.after)
	}
}

// A read scans at most MaxScanBytes (64 MiB by default) looking for its
// lines; the start of a bigger file stays readable.
func TestReadTextFileScanLimit(t *testing.T) {
	e := newFSEnv(t)
	p := filepath.Join(e.root, "sparse.txt")
	head := sparseFile(t, p, 1<<30)
	w := &FS{Roots: []string{e.root}}
	_, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: p, Line: u32(1002)})
	if !errors.Is(err, schema.ErrLimitExceeded) {
		t.Fatalf("read past the scan limit = %v, want schema.ErrLimitExceeded", err)
	}
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "MaxScanBytes") {
		t.Errorf("message %q does not name the limit", got.Message)
	}
	resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: p, Line: u32(1), Limit: u32(1000)})
	if err != nil {
		t.Errorf("head of a huge file: %v", err)
	} else if resp.Content != head {
		t.Errorf("head of a huge file: %d bytes, want %d", len(resp.Content), len(head))
	}

	// The same over many short lines, with a small limit.
	mustWrite(t, p, strings.Repeat("line\n", 10000))
	w.MaxScanBytes = 1000
	if _, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: p, Line: u32(5000), Limit: u32(1)}); !errors.Is(err, schema.ErrLimitExceeded) {
		t.Errorf("far line past a 1000-byte scan limit = %v, want schema.ErrLimitExceeded", err)
	}
	if resp, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: p, Line: u32(10), Limit: u32(2)}); err != nil || resp.Content != "line\nline\n" {
		t.Errorf("near line = %+v, %v", resp, err)
	}
}
