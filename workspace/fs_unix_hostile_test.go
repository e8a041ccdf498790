//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
)

// Attack (audit row 3, FIFO half): the target's name is swapped for a FIFO
// between the moment FS checks it and the moment it reads it. A blocking
// open(2) of a FIFO waits for a writer forever, past the request's context.
// FS opens once, with O_NONBLOCK|O_NOFOLLOW, and refuses a non-regular
// descriptor before reading, so the swap either does not matter (the
// descriptor is the old file) or is refused.

// mustReturn runs call and fails the test if it has not returned shortly
// before the test's deadline (go test -timeout): it then opens fifo for
// writing, which releases an open(2) blocked on it, so the test fails with
// a message instead of the binary dying (a later test then has no time
// left and fails too). Success never waits on a clock.
func mustReturn(t *testing.T, fifo string, call func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	var expired <-chan time.Time
	if d, ok := t.Deadline(); ok {
		expired = time.After(time.Until(d) - 5*time.Second)
	}
	select {
	case <-done:
	case <-expired:
		// Until the call returns: the open fails while no reader waits.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			select {
			case <-done:
				t.Fatal("the call hung in open(2) on a FIFO until the test's deadline")
			case <-tick.C:
			}
		}
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A FIFO swapped in at the target right after it was opened (or checked):
// ReviewWrite gets the regular file that was opened, and the write
// replaces the name.
func TestWriteReviewSwapToFIFO(t *testing.T) {
	for _, step := range []string{"opened", "checked"} {
		t.Run(step, func(t *testing.T) {
			e := newFSEnv(t)
			target := filepath.Join(e.root, "file.txt")
			var rec reviewRecorder
			w := &FS{Roots: []string{e.root}, ReviewWrite: rec.review}
			w.testHook = swapAt(step, func() {
				fifo := filepath.Join(e.root, "fifo")
				mkfifo(t, fifo)
				if err := os.Rename(fifo, target); err != nil {
					t.Fatal(err)
				}
			})
			var err error
			mustReturn(t, target, func() {
				_, err = w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
			})
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			if rec.old != "inside\n" {
				t.Errorf("ReviewWrite got old content %q, want the %q that was opened", rec.old, "inside\n")
			}
			if got := readFile(t, target); got != "new\n" {
				t.Errorf("target = %q, want the new content", got)
			}
		})
	}
}

// A read whose target becomes a FIFO right after the open still reads the
// file it opened.
func TestReadSwapToFIFO(t *testing.T) {
	e := newFSEnv(t)
	target := filepath.Join(e.root, "file.txt")
	w := &FS{Roots: []string{e.root}}
	w.testHook = swapAt("opened", func() {
		fifo := filepath.Join(e.root, "fifo")
		mkfifo(t, fifo)
		if err := os.Rename(fifo, target); err != nil {
			t.Fatal(err)
		}
	})
	var resp *schema.ReadTextFileResponse
	var err error
	mustReturn(t, target, func() {
		resp, err = w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: target})
	})
	if err != nil || resp.Content != "inside\n" {
		t.Fatalf("read = %+v, %v; want the file that was opened", resp, err)
	}
}

// A FIFO at the target is refused at once by reads and by writes with and
// without review, with a message saying what it is.
func TestFIFOAtTarget(t *testing.T) {
	e := newFSEnv(t)
	fifo := filepath.Join(e.root, "fifo")
	mkfifo(t, fifo)
	var rec reviewRecorder
	calls := map[string]func(w *FS) error{
		"read": func(w *FS) error {
			_, err := w.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: fifo})
			return err
		},
		"write": func(w *FS) error {
			_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: fifo, Content: "x"})
			return err
		},
		"reviewed write": func(w *FS) error {
			w.ReviewWrite = rec.review
			_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: fifo, Content: "x"})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var err error
			mustReturn(t, fifo, func() { err = call(&FS{Roots: []string{e.root}}) })
			if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "named pipe") {
				t.Errorf("message %q does not say the target is a named pipe", got.Message)
			}
		})
	}
	if rec.calls > 0 {
		t.Error("ReviewWrite was called for a FIFO")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
}

// A symlink swapped in at the target after FS followed the links: what the
// review would read (the link's target) is not what the rename replaces
// (the link), so the write is refused and nothing changes.
func TestWriteReviewSymlinkSwappedIn(t *testing.T) {
	e := newFSEnv(t)
	target := filepath.Join(e.root, "file.txt")
	other := filepath.Join(e.root, "other.txt")
	mustWrite(t, other, "other\n")
	var rec reviewRecorder
	w := &FS{Roots: []string{e.root}, ReviewWrite: rec.review}
	w.testHook = swapAt("resolved", func() {
		link := filepath.Join(e.root, "link")
		mustSymlink(t, "other.txt", link)
		if err := os.Rename(link, target); err != nil {
			t.Fatal(err)
		}
	})
	_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
	if rec.calls > 0 {
		t.Fatalf("ReviewWrite was shown %q, the content of a file the write does not replace", rec.old)
	}
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "symbolic link") {
		t.Errorf("message %q does not say the target became a symbolic link", got.Message)
	}
	if got := readFile(t, other); got != "other\n" {
		t.Errorf("the link's target changed: %q", got)
	}
	if fi, err := os.Lstat(target); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
}
