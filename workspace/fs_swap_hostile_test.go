package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// Attack (audit row 3): while fs/write_text_file waits on ReviewWrite's
// read of the old content, a process the agent started swaps the target's
// name between a small file and a huge (sparse) one, or grows it in place.
// The write checks what it reads: one open, fstat on that descriptor, a read
// bounded by MaxReadBytes. Limit: a file over MaxReadBytes is refused, never
// shown in part (the review must see all it replaces).

// reviewRecorder is a ReviewWrite that records the old content it got.
type reviewRecorder struct {
	calls int
	old   string
}

func (r *reviewRecorder) review(_ context.Context, _, old, _ string, _ bool) error {
	r.calls++
	r.old = old
	return nil
}

// swapAt returns a test hook that runs swap once, at the named step.
func swapAt(step string, swap func()) func(string) {
	done := false
	return func(s string) {
		if s == step && !done {
			done = true
			swap()
		}
	}
}

// The name swapped for a huge file once the target is open (or checked):
// the review gets the small file that was opened, never more than
// MaxReadBytes, and the write replaces the name.
func TestWriteReviewSwapToHugeFile(t *testing.T) {
	for _, step := range []string{"opened", "checked"} {
		t.Run(step, func(t *testing.T) {
			e := newFSEnv(t)
			target := filepath.Join(e.root, "file.txt")
			huge := filepath.Join(e.root, "huge.txt")
			sparseFile(t, huge, 64<<20)
			var rec reviewRecorder
			w := &FS{Roots: []string{e.root}, MaxReadBytes: 1 << 20, ReviewWrite: rec.review}
			w.testHook = swapAt(step, func() {
				if err := os.Rename(huge, target); err != nil {
					t.Fatal(err)
				}
			})
			_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			if len(rec.old) > 1<<20 {
				t.Fatalf("ReviewWrite got %d bytes of old content, over MaxReadBytes (%d)", len(rec.old), 1<<20)
			}
			if rec.old != "inside\n" {
				t.Errorf("ReviewWrite got %d bytes of old content, want the %q that was opened", len(rec.old), "inside\n")
			}
			if got := readFile(t, target); got != "new\n" {
				t.Errorf("target = %d bytes, want the new content", len(got))
			}
		})
	}
}

// The target grows in place after its size was checked: the bounded read
// stops at MaxReadBytes and the write is refused, naming the limit.
func TestWriteReviewFileGrowsAfterCheck(t *testing.T) {
	e := newFSEnv(t)
	target := filepath.Join(e.root, "file.txt")
	var rec reviewRecorder
	w := &FS{Roots: []string{e.root}, MaxReadBytes: 1 << 20, ReviewWrite: rec.review}
	w.testHook = swapAt("checked", func() {
		if err := os.Truncate(target, 64<<20); err != nil {
			t.Fatal(err)
		}
	})
	_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
	if rec.calls > 0 {
		t.Fatalf("ReviewWrite was called with %d bytes of old content, over MaxReadBytes (%d)", len(rec.old), 1<<20)
	}
	if !errors.Is(err, schema.ErrLimitExceeded) {
		t.Fatalf("write over a file that grew past the limit = %v, want schema.ErrLimitExceeded", err)
	}
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "MaxReadBytes") {
		t.Errorf("message %q does not name the limit", got.Message)
	}
	if fi, err := os.Stat(target); err != nil || fi.Size() != 64<<20 {
		t.Errorf("a refused write changed the target: %v, %v", fi, err)
	}
}

// A 1 GiB sparse file at the target: refused before any read, naming
// MaxReadBytes; ReviewWrite is not called.
func TestWriteReviewHugeFileAtTarget(t *testing.T) {
	e := newFSEnv(t)
	target := filepath.Join(e.root, "file.txt")
	sparseFile(t, target, 1<<30)
	var rec reviewRecorder
	w := &FS{Roots: []string{e.root}, ReviewWrite: rec.review}
	_, err := w.WriteTextFile(context.Background(), &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
	if rec.calls > 0 {
		t.Fatalf("ReviewWrite was called with %d bytes of old content", len(rec.old))
	}
	if !errors.Is(err, schema.ErrLimitExceeded) {
		t.Fatalf("write over a 1 GiB file = %v, want schema.ErrLimitExceeded", err)
	}
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "MaxReadBytes") {
		t.Errorf("message %q does not name the limit", got.Message)
	}
}

// Reading the old content for review stops when the agent withdraws the
// request, and ReviewWrite is then not called.
func TestWriteReviewReadStopsOnCancel(t *testing.T) {
	e := newFSEnv(t)
	target := filepath.Join(e.root, "file.txt")
	sparseFile(t, target, 8<<20)
	var rec reviewRecorder
	w := &FS{Roots: []string{e.root}, ReviewWrite: rec.review}
	// Cancelled after the first check, that is after at most a MiB read.
	ctx := &cancelAfter{Context: context.Background(), after: 1}
	_, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: target, Content: "new\n"})
	if rec.calls > 0 {
		t.Fatal("ReviewWrite was called after the request was withdrawn")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("write of a withdrawn request = %v, want context.Canceled", err)
	}
	if ctx.calls > 3 {
		t.Errorf("the read went on checking the context %d times after it was cancelled", ctx.calls-ctx.after)
	}
}

// readBounded never holds more than max bytes, whatever size fstat said.
func TestReadBounded(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		content   string
		size, max int64
		want      string
		err       error
	}{
		{content: "hello", size: 5, max: 5, want: "hello"},
		{content: "hello", size: 5, max: 10, want: "hello"},
		{content: "hello", size: 0, max: 10, want: "hello"}, // grew, within the limit
		{content: "hello", size: 2, max: 4, err: errGrew},   // grew past it
		{content: "hello", size: 9, max: 10, want: "hello"}, // shrank
		{content: "", size: 0, max: 1, want: ""},
	} {
		got, err := readBounded(ctx, strings.NewReader(tc.content), tc.size, tc.max)
		if !errors.Is(err, tc.err) || string(got) != tc.want {
			t.Errorf("readBounded(%q, size %d, max %d) = %q, %v; want %q, %v", tc.content, tc.size, tc.max, got, err, tc.want, tc.err)
		}
		if int64(cap(got)) > tc.max {
			t.Errorf("readBounded(%q, size %d, max %d) kept a %d-byte buffer", tc.content, tc.size, tc.max, cap(got))
		}
	}
}

// Audit row 15: a hard link inside the root to a file outside it is read
// through (confinement is by path, not inode) unless RefuseHardLinks is
// set; writes replace the name and never reach the outside file.
func TestHardLinkOutOfRoot(t *testing.T) {
	e := newFSEnv(t)
	secret := filepath.Join(e.outside, "secret")
	link := filepath.Join(e.root, "linked.txt")
	if err := os.Link(secret, link); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	w := &FS{Roots: []string{e.root}}
	resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: link})
	if err != nil || resp.Content != "top secret\n" {
		t.Fatalf("read of a hard link by default = %+v, %v; want the linked content (documented)", resp, err)
	}

	var rec reviewRecorder
	w = &FS{Roots: []string{e.root}, RefuseHardLinks: true, ReviewWrite: rec.review}
	_, err = w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: link})
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "RefuseHardLinks") {
		t.Errorf("read message %q does not name the option", got.Message)
	}
	_, err = w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: link, Content: "new\n"})
	if got := wantCode(t, err, schema.CodeInvalidParams); !strings.Contains(got.Message, "RefuseHardLinks") {
		t.Errorf("reviewed write message %q does not name the option", got.Message)
	}
	if rec.calls > 0 {
		t.Errorf("ReviewWrite was shown %q through a hard link", rec.old)
	}
	// A file with one name is read as usual.
	if resp, err := w.ReadTextFile(ctx, &schema.ReadTextFileRequest{Path: filepath.Join(e.root, "file.txt")}); err != nil || resp.Content != "inside\n" {
		t.Errorf("read of a plain file with RefuseHardLinks = %+v, %v", resp, err)
	}

	// Without review, a write splits the link: the outside file is intact.
	w = &FS{Roots: []string{e.root}, RefuseHardLinks: true}
	if _, err := w.WriteTextFile(ctx, &schema.WriteTextFileRequest{Path: link, Content: "new\n"}); err != nil {
		t.Fatalf("write over a hard link: %v", err)
	}
	if got := readFile(t, secret); got != "top secret\n" {
		t.Errorf("the write reached the file outside the root: %q", got)
	}
}
