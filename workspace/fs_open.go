package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/acpclient/acp/schema"
)

// What FS checks about a file is checked on the descriptor it then reads,
// never by name before opening it: a name can be swapped (for a FIFO, a
// device or a huge file) between a check and an open, by any process that
// can write the workspace, such as a terminal the agent started. So every
// read is: open the directory that holds the file, open the file in it
// once (without following a symlink and without blocking), fstat that
// descriptor, refuse anything but a regular file, then read a bounded
// amount from it. A write renames over the name in the same directory.

// notRegularError refuses a target that is not a regular file; mode says
// what it is instead.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string { return "not a regular file: it is " + kindOf(e.mode) }

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link that appeared while the request was served"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// regularBase reports whether base can name a regular file in its
// directory: "", "." and ".." name directories, and ".." must never reach
// the raw openat of openRegular, which would step out of the root.
func regularBase(base string) error {
	if base == "" || base == "." || base == ".." {
		return &notRegularError{mode: fs.ModeDir}
	}
	return nil
}

// openParent opens the directory holding rel's last element through root
// and returns it with that element. The caller closes dir.
func openParent(root *os.Root, rel string) (dir *os.Root, base string, err error) {
	dirName, base := splitRel(rel)
	if dirName == "" {
		dirName = "."
	}
	dir, err = root.OpenRoot(dirName)
	return dir, base, err
}

// openChecked opens base in dir with openRegular and reports the steps to
// the test hook.
func (w *FS) openChecked(dir *os.Root, base string) (*os.File, fs.FileInfo, error) {
	w.step("resolved")
	if err := regularBase(base); err != nil {
		return nil, nil, err
	}
	f, fi, err := openRegular(dir, base, w.step)
	if err != nil {
		return nil, nil, err
	}
	if w.RefuseHardLinks {
		if n, ok := linkCount(f, fi); !ok || n > 1 {
			f.Close()
			return nil, nil, &hardLinkError{links: n, known: ok}
		}
	}
	w.step("checked")
	return f, fi, nil
}

// hardLinkError is the refusal of FS.RefuseHardLinks.
type hardLinkError struct {
	links uint64
	known bool
}

func (e *hardLinkError) Error() string {
	if !e.known {
		return "the number of names (hard links) of the file is unknown here (workspace.FS.RefuseHardLinks)"
	}
	return fmt.Sprintf("the file has %d names (hard links), which may lie outside the workspace (workspace.FS.RefuseHardLinks)", e.links)
}

// step calls the test hook, if any, between the steps of opening a file.
func (w *FS) step(name string) {
	if w.testHook != nil {
		w.testHook(name)
	}
}

// errGrew is readBounded's report of more than max bytes.
var errGrew = errors.New("file grew past the limit while being read")

// readBounded reads r to its end, expecting about size bytes (as fstat
// said, at most max): it never holds more than max bytes, so a file that
// grows after fstat (or whose size fstat misreports) yields errGrew rather
// than more memory. ctx is checked before every read of up to a MiB.
func readBounded(ctx context.Context, r io.Reader, size, max int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, max))
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if int64(len(buf)) >= max {
			// Full: one more byte means the file is over the limit.
			var one [1]byte
			n, err := r.Read(one[:])
			switch {
			case n > 0:
				return nil, errGrew
			case err == io.EOF:
				return buf, nil
			case err != nil:
				return nil, err
			}
			continue
		}
		if len(buf) == cap(buf) {
			// The file grew since fstat: more room, never past max (not
			// append's growth, which rounds up).
			nb := make([]byte, len(buf), min(max, 2*int64(cap(buf))+4096))
			copy(nb, buf)
			buf = nb
		}
		end := min(cap(buf), len(buf)+cancelCheckBytes, int(max))
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readOld reads the file a write is about to replace, for ReviewWrite:
// base in dir, opened once, checked on its descriptor, read to at most
// MaxReadBytes. A file over the limit is refused rather than shown in part:
// a review of a partial old content would misstate what the write replaces.
func (w *FS) readOld(ctx context.Context, dir *os.Root, base string, rp *resolvedPath) ([]byte, fs.FileInfo, error) {
	f, fi, err := w.openChecked(dir, base)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	max := w.maxRead()
	if fi.Size() > max {
		return nil, nil, reviewTooLarge(rp, fi.Size(), max)
	}
	old, err := readBounded(ctx, f, fi.Size(), max)
	if errors.Is(err, errGrew) {
		return nil, nil, reviewTooLarge(rp, -1, max)
	}
	if err != nil {
		return nil, nil, err
	}
	return old, fi, nil
}

// openError turns an error from opening a file to serve op into the error
// sent to the agent.
func openError(rp *resolvedPath, op string, err error) error {
	var nr *notRegularError
	if errors.As(err, &nr) {
		return pathError(schema.CodeInvalidParams, rp.agent, "workspace: %s is not a regular file: it is %s", rp.agent, kindOf(nr.mode))
	}
	var hl *hardLinkError
	if errors.As(err, &hl) {
		return pathError(schema.CodeInvalidParams, rp.agent, "workspace: %s refused: %v", rp.agent, hl)
	}
	var le *handlerLimitError
	if errors.As(err, &le) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fsError(rp, op, err)
}

func reviewTooLarge(rp *resolvedPath, size, max int64) error {
	data := map[string]any{"path": rp.agent, "limit": "workspace.FS.MaxReadBytes", "max": max}
	if size >= 0 {
		return limitExceeded(schema.CodeInvalidParams, data,
			"workspace: limit exceeded: %s is too large to review before replacing it (%d bytes, limit %d, workspace.FS.MaxReadBytes)", rp.agent, size, max)
	}
	return limitExceeded(schema.CodeInvalidParams, data,
		"workspace: limit exceeded: %s grew past %d bytes while being read for review (workspace.FS.MaxReadBytes)", rp.agent, max)
}
