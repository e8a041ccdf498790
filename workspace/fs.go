package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/wsroot"
	"github.com/acpclient/acp/schema"
)

// defaultMaxReadBytes is FS's read cap when MaxReadBytes is 0: large
// enough for any source file, small enough that one request cannot make the
// client build a huge JSON line.
const defaultMaxReadBytes = 10 << 20

// defaultMaxScanBytes is FS's scan cap when MaxScanBytes is 0:
// far beyond any source file, and scanned in a fraction of a second.
const defaultMaxScanBytes = 64 << 20

// cancelCheckBytes is how much a read scans between checks that its
// request is still wanted.
const cancelCheckBytes = 1 << 20

// maxLinkHops bounds the final-component symlink chains FS follows
// itself (Linux's own limit is 40).
const maxLinkHops = 40

// FS serves fs/read_text_file and fs/write_text_file (see
// [FS.Handlers]) and confines the agent
// to a set of workspace roots. The zero value is usable: it confines the agent
// to the roots of the request's session ([acp.RootsFromContext]).
//
// Confinement is done by [os.Root], not by comparing strings: every path is
// opened relative to a root directory handle, so "..", symlinks (or
// symlinked parent directories) that lead out of the root and similar tricks
// fail by construction, even if the tree changes while a request is served.
// One consequence of os.Root's rules: a symlink with an absolute target is
// refused when it is a parent directory of the requested path (when it is
// the file itself, FS follows it, as long as it stays inside the
// root).
//
// What confinement promises is about paths, not files: no path the agent
// sends reaches a name outside the roots. It does not follow a file's other
// names: a hard link inside a root to a file outside it (which only
// something other than FS can make) is read through, since content belongs
// to the inode, not to a name. Set RefuseHardLinks to refuse such files.
//
// What FS checks about a file it checks on the descriptor it reads, never
// by name before opening: the file is opened once (on Unix without
// following a symlink and without blocking), fstat tells whether it is a
// regular file and how large, and at most MaxReadBytes are read from that
// same descriptor. So a process that swaps the name meanwhile (for a FIFO,
// a device or a huge file) cannot make a request hang or hand out more
// than the limit: a FIFO, socket, device or directory is refused with
// [schema.CodeInvalidParams] before any read, and a symlink that appears at the
// name after FS followed the links is refused the same way.
//
// Paths must be absolute and free of ".." elements and NUL bytes; otherwise
// the request fails with [schema.CodeInvalidParams], as does a path outside every
// root. A missing file is [schema.CodeResourceNotFound] with data {"uri": "file://…"}.
//
// Reads: Line is 1-based and Line 0 is treated as 1 (agents commonly send 0
// for "from the start"); a Line past the end yields empty content; Limit 0
// yields empty content (it is read literally as "at most zero lines"). The
// returned text keeps the file's own line endings (CRLF stays CRLF) and a
// missing final newline stays missing. Files that contain a NUL byte in
// their first 8 KiB or whose returned text is not valid UTF-8 are refused
// with [schema.CodeInvalidParams] ("not a text file"), as is content over
// MaxReadBytes and a window that ends more than MaxScanBytes into the file;
// those two wrap [schema.ErrLimitExceeded].
//
// Writes create the file, and any missing parent directories inside the
// root (mode 0755). They are atomic: the content goes to a temporary file in
// the same directory, is fsynced, and is renamed over the target, so a
// failed or refused write leaves the old content in place and no temporary
// file behind, even when a parent directory is renamed or replaced while
// the write runs (the write then completes in the directory it began in,
// which was inside the root). An existing file keeps its permission bits;
// a new file gets 0644. Writing through a symlink replaces the file the
// link points to (if that is inside the root), not the link. Ownership and
// extended attributes are not preserved, and a hard-linked target is split
// from its other names.
//
// Methods may be called concurrently. They do not keep files or directory
// handles open between calls. The hooks are called on the request's
// goroutine.
type FS struct {
	// Roots are the absolute directories the agent may access. When empty,
	// the session's roots from the request context are used; when both are
	// empty every request is refused. A root may itself be a symlink; paths
	// may then name files under the link or under its target.
	Roots []string

	// MaxReadBytes caps the content a read returns (and, when ReviewWrite is
	// set, the size of an existing file a write replaces, which the hook is
	// given in full). 0 means 10 MiB. A read over it is refused with
	// schema.CodeInvalidParams, wrapping [schema.ErrLimitExceeded]; so is a write
	// whose old content is over it (by fstat, or because the file grew while
	// it was read), as a review of part of the old content would misstate
	// what the write replaces. At most MaxReadBytes of it are ever held.
	MaxReadBytes int64

	// MaxScanBytes caps how far into a file a read goes to find the lines
	// it was asked for. 0 means 64 MiB. The start of a larger file can
	// still be read; a window that ends past the cap (a far line of a huge
	// log, or one enormous line) is refused with schema.CodeInvalidParams,
	// wrapping [schema.ErrLimitExceeded], after at most MaxScanBytes were read.
	// A read also stops, with the context's error, within about a MiB of
	// scanning after the agent withdraws the request.
	MaxScanBytes int64

	// RefuseHardLinks refuses to read a file that has more than one name
	// (st_nlink > 1), for fs/read_text_file and for the old content shown to
	// ReviewWrite, with schema.CodeInvalidParams. Confinement is by path: a
	// hard link inside a root to a file outside it is read through, as the
	// file's content belongs to the inode, not to any one name. Off by
	// default, because hard links are common and harmless in most trees
	// (pnpm's node_modules, cp -al backups); where the count cannot be
	// known (not Unix or Windows), every read is refused. Writes never go
	// through a hard link: they replace the name (see above).
	RefuseHardLinks bool

	// PathMapper, if set, maps each path the agent sends to a local path
	// before anything else happens, e.g. from a dev container's view to the
	// host's. An error refuses the request with schema.CodeInvalidParams.
	PathMapper func(path string) (string, error)

	// Overlay, if set, is asked first on every read with the cleaned local
	// path; when it reports ok, content is served instead of the file on
	// disk (typically an unsaved editor buffer). The path has been checked
	// to lie inside a root; the file need not exist.
	Overlay func(path string) (content string, ok bool)

	// ReviewWrite, if set, is called before a write takes effect, with the
	// cleaned local path, the current content ("" and exists false for a new
	// file) and the proposed content. The current content is that of the
	// file the write replaces: read from the one descriptor that was
	// checked, in the directory the write then renames into. A file changed
	// (by another process) while the hook runs is replaced all the same. It may block, e.g. while the user
	// reviews a diff; ctx is the request's and is cancelled if the agent
	// withdraws it. A non-nil error refuses the write and is sent to the
	// agent (return an *schema.Error to choose the code). The write also does not
	// happen if ctx is done by the time ReviewWrite returns.
	ReviewWrite func(ctx context.Context, path, oldContent, newContent string, exists bool) error

	// wrapWriter lets tests inject a failing writer between the temporary
	// file and the content.
	wrapWriter func(io.Writer) io.Writer

	// testHook, if set, is called between the steps of opening a file to
	// read ("resolved": symlinks followed, before the open; "opened": after
	// the open; "checked": after fstat), so tests can swap the name at
	// exactly those points.
	testHook func(step string)
}

// resolvedPath is a request path located inside one root.
type resolvedPath struct {
	root     *os.Root // caller closes
	rootReal string   // the root directory with symlinks evaluated
	rel      string   // the path relative to the root, without ".."
	local    string   // cleaned absolute local path, as hooks see it
	agent    string   // the path exactly as the agent sent it
}

// Handlers returns the handlers to set as [acp.ClientOptions.FS]: reading and
// writing, both bound to w.
func (w *FS) Handlers() acp.FileSystemHandlers {
	return acp.FileSystemHandlers{ReadTextFile: w.ReadTextFile, WriteTextFile: w.WriteTextFile}
}

// ReadTextFile serves fs/read_text_file.
func (w *FS) ReadTextFile(ctx context.Context, req *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	rp, err := w.resolve(ctx, req.Path)
	if err != nil {
		return nil, err
	}
	defer rp.root.Close()

	limit := w.maxRead()
	if w.Overlay != nil {
		// The overlay must not become a way around confinement: a path
		// whose parents escape the root is refused even if a buffer claims
		// it. A file that does not exist (yet) is fine.
		if _, err := rp.root.Lstat(rp.rel); err != nil && !isNotFound(err) {
			return nil, fsError(rp, "read", err)
		}
		if content, ok := w.Overlay(rp.local); ok {
			text, err := selectLines(ctx, strings.NewReader(content), req.Line, req.Limit, limit, w.maxScan(), rp)
			if err != nil {
				return nil, err
			}
			return &schema.ReadTextFileResponse{Content: text}, nil
		}
	}

	rel, err := followFinalLinks(rp)
	if err != nil {
		return nil, err
	}
	dir, base, err := openParent(rp.root, rel)
	if err != nil {
		return nil, fsError(rp, "read", err)
	}
	defer dir.Close()
	f, fi, err := w.openChecked(dir, base)
	if err != nil {
		return nil, openError(rp, "read", err)
	}
	defer f.Close()
	// Without a window the whole file is returned, so its size tells early
	// whether it fits.
	if req.Line == nil && req.Limit == nil && fi.Size() > limit {
		return nil, tooLarge(rp, fi.Size(), limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, err := selectLines(ctx, f, req.Line, req.Limit, limit, w.maxScan(), rp)
	if err != nil {
		return nil, err
	}
	return &schema.ReadTextFileResponse{Content: text}, nil
}

// selectLines returns the requested window of r's lines, each with its own
// terminator, refusing binary data, output over max bytes and windows that
// end more than maxScan bytes in.
func selectLines(ctx context.Context, r io.Reader, line, limit *uint32, max, maxScan int64, rp *resolvedPath) (string, error) {
	var scanned, nextCheck int64
	// scan accounts for k more bytes read. Skipping to a far line can take
	// a while: stop if the agent gave up or the scan goes too far.
	scan := func(k int) error {
		scanned += int64(k)
		if scanned > maxScan {
			return limitExceeded(schema.CodeInvalidParams,
				map[string]any{"path": rp.agent, "limit": "workspace.FS.MaxScanBytes", "max": maxScan},
				"workspace: limit exceeded: %s: the requested lines end more than %d bytes into the file (workspace.FS.MaxScanBytes)", rp.agent, maxScan)
		}
		if scanned >= nextCheck {
			nextCheck = scanned + cancelCheckBytes
			return ctx.Err()
		}
		return nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	// Binary files are told by a NUL byte near the start, as git and most
	// editors do; the UTF-8 check below catches the rest.
	if head, _ := br.Peek(8 << 10); bytes.IndexByte(head, 0) >= 0 {
		return "", notText(rp)
	}
	start := uint64(1)
	if line != nil && *line > 1 {
		start = uint64(*line)
	}
	var count uint64 = ^uint64(0)
	if limit != nil {
		count = uint64(*limit)
	}
	if count == 0 {
		return "", nil
	}

	var out bytes.Buffer
	for n := uint64(1); ; n++ {
		chunk, err := br.ReadSlice('\n')
		if serr := scan(len(chunk)); serr != nil {
			return "", serr
		}
		for errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep it only if it is in the
			// window, and keep reading it either way.
			if n >= start {
				if int64(out.Len()+len(chunk)) > max {
					return "", tooLarge(rp, -1, max)
				}
				out.Write(chunk)
			}
			chunk, err = br.ReadSlice('\n')
			if serr := scan(len(chunk)); serr != nil {
				return "", serr
			}
		}
		if n >= start {
			if int64(out.Len()+len(chunk)) > max {
				return "", tooLarge(rp, -1, max)
			}
			out.Write(chunk)
			if n-start+1 >= count {
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fsError(rp, "read", err)
		}
	}
	if !utf8.Valid(out.Bytes()) {
		return "", notText(rp)
	}
	return out.String(), nil
}

// WriteTextFile serves fs/write_text_file.
func (w *FS) WriteTextFile(ctx context.Context, req *schema.WriteTextFileRequest) (*schema.WriteTextFileResponse, error) {
	rp, err := w.resolve(ctx, req.Path)
	if err != nil {
		return nil, err
	}
	defer rp.root.Close()
	if rp.rel == "." {
		return nil, pathError(schema.CodeInvalidParams, rp.agent, "workspace: %s is a directory", rp.agent)
	}

	rel, err := followFinalLinks(rp)
	if err != nil {
		return nil, err
	}
	// The directory is opened once: the old content is read, and the new
	// one renamed over it, in this same directory, even if a parent is
	// renamed or replaced meanwhile. It is missing when the write creates it.
	dir, base, err := openParent(rp.root, rel)
	switch {
	case err == nil:
	case isNotFound(err):
		dir = nil
	default:
		return nil, fsError(rp, "write", err)
	}
	defer func() {
		if dir != nil {
			dir.Close()
		}
	}()
	if err := regularBase(base); err != nil {
		return nil, openError(rp, "write", err)
	}
	mode := os.FileMode(0o644)
	exists := false
	var old []byte
	if dir != nil {
		var fi fs.FileInfo
		if w.ReviewWrite != nil {
			old, fi, err = w.readOld(ctx, dir, base, rp)
		} else {
			// Only the mode is needed: no open, so no read permission
			// either; the rename below replaces whatever the name holds.
			fi, err = dir.Lstat(base)
			if err == nil && !fi.Mode().IsRegular() {
				err = &notRegularError{mode: fi.Mode().Type()}
			}
		}
		switch {
		case err == nil:
			exists = true
			mode = fi.Mode().Perm()
		case isNotFound(err):
		default:
			return nil, openError(rp, "write", err)
		}
	}

	if w.ReviewWrite != nil {
		if err := w.ReviewWrite(ctx, rp.local, string(old), req.Content, exists); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if dir == nil {
		dirName, _ := splitRel(rel)
		if err := rp.root.MkdirAll(dirName, 0o755); err != nil {
			return nil, fsError(rp, "write", err)
		}
		if dir, _, err = openParent(rp.root, rel); err != nil {
			return nil, fsError(rp, "write", err)
		}
	}
	if err := w.writeAtomic(dir, base, req.Content, mode); err != nil {
		return nil, fsError(rp, "write", err)
	}
	return &schema.WriteTextFileResponse{}, nil
}

// writeAtomic replaces base in dir with content so that a reader sees either the old
// or the new file, never a partial one, and a crash leaves no torn file.
//
// Every step goes through dir, the one handle on the directory the write
// began in (the caller opened it before reading the old content):
// if a parent directory is renamed or replaced by a symlink meanwhile, the
// temporary file is still renamed into, or removed from, the directory it
// was created in, instead of being looked up again by a path that now
// leads elsewhere (or out of the root) and left behind.
func (w *FS) writeAtomic(dir *os.Root, base, content string, mode os.FileMode) (err error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + base + ".acp-tmp-" + hex.EncodeToString(rnd[:])

	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	// Chmod on the descriptor, not through the root: it cannot be redirected
	// by a symlink swapped in meanwhile, and it is not subject to the umask.
	if err = f.Chmod(mode); err != nil {
		return err
	}
	var dst io.Writer = f
	if w.wrapWriter != nil {
		dst = w.wrapWriter(f)
	}
	if _, err = io.WriteString(dst, content); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = dir.Rename(tmp, base); err != nil {
		return err
	}
	// Make the rename itself durable; failing to is not worth failing a
	// write that already took effect.
	if d, derr := dir.Open("."); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

func (w *FS) maxScan() int64 {
	if w.MaxScanBytes > 0 {
		return w.MaxScanBytes
	}
	return defaultMaxScanBytes
}

func (w *FS) maxRead() int64 {
	if w.MaxReadBytes > 0 {
		return w.MaxReadBytes
	}
	return defaultMaxReadBytes
}

// resolve maps and validates an agent path and opens the root it lies in.
func (w *FS) resolve(ctx context.Context, agentPath string) (*resolvedPath, error) {
	p := agentPath
	if w.PathMapper != nil {
		mapped, err := w.PathMapper(p)
		if err != nil {
			return nil, pathError(schema.CodeInvalidParams, agentPath, "workspace: cannot map path %q: %v", agentPath, err)
		}
		p = mapped
	}
	local, err := checkPath(agentPath, p)
	if err != nil {
		return nil, err
	}
	roots := w.Roots
	if len(roots) == 0 {
		roots = acp.RootsFromContext(ctx)
	}
	if len(roots) == 0 {
		return nil, pathError(schema.CodeInvalidParams, agentPath, "workspace: no workspace roots; refusing access to %s", agentPath)
	}
	rootReal, rel, ok := pickRoot(roots, local)
	if !ok {
		return nil, pathError(schema.CodeInvalidParams, agentPath, "workspace: %s is outside the workspace roots", agentPath)
	}
	r, err := os.OpenRoot(rootReal)
	if err != nil {
		return nil, pathError(schema.CodeInternalError, agentPath, "workspace: cannot open workspace root for %s: %v", agentPath, err)
	}
	return &resolvedPath{root: r, rootReal: rootReal, rel: rel, local: local, agent: agentPath}, nil
}

// checkPath refuses paths that are not plainly absolute and returns p
// cleaned. ".." is refused rather than cleaned away because the kernel
// resolves it after symlinks ("link/.." need not be "."), so cleaning it
// lexically could silently name a different file than the agent meant.
func checkPath(agentPath, p string) (string, error) {
	switch {
	case p == "":
		return "", pathError(schema.CodeInvalidParams, agentPath, "workspace: empty path")
	case strings.IndexByte(p, 0) >= 0:
		return "", pathError(schema.CodeInvalidParams, agentPath, "workspace: path %q contains a NUL byte", agentPath)
	case !filepath.IsAbs(p):
		return "", pathError(schema.CodeInvalidParams, agentPath, "workspace: path %q is not absolute", agentPath)
	}
	for _, elem := range strings.Split(p, string(filepath.Separator)) {
		if elem == ".." {
			return "", pathError(schema.CodeInvalidParams, agentPath, "workspace: path %q contains \"..\"", agentPath)
		}
	}
	return filepath.Clean(p), nil
}

// pickRoot chooses the innermost root that lexically contains p, under the
// root's name as given or with its symlinks evaluated, and returns the real
// root directory and p relative to it. The choice is only lexical; os.Root
// enforces the boundary when the file is opened.
func pickRoot(roots []string, p string) (rootReal, rel string, ok bool) {
	best := -1
	for _, r := range roots {
		r, err := wsroot.Clean(r)
		if err != nil {
			continue // a relative root has no meaning for absolute paths
		}
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue // a missing root holds nothing
		}
		for _, base := range []string{r, real} {
			rl, in := within(base, p)
			if in && len(base) > best {
				best, rootReal, rel, ok = len(base), real, rl, true
			}
		}
	}
	return rootReal, rel, ok
}

// within reports whether p is base or below it, and p relative to base. A
// plain prefix test would let /ws/app-evil pass for /ws/app.
func within(base, p string) (string, bool) {
	if p == base {
		return ".", true
	}
	prefix := base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(p, prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

// followFinalLinks resolves symlinks in the last element of rp.rel, so that
// a write replaces the file a link points to instead of the link, and so
// that links with absolute targets inside the root work (os.Root refuses
// absolute link targets). Parent directories are left to os.Root.
func followFinalLinks(rp *resolvedPath) (string, error) {
	rel := rp.rel
	for range maxLinkHops {
		fi, err := rp.root.Lstat(rel)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return rel, nil // a missing file or a non-link is for the caller
		}
		target, err := rp.root.Readlink(rel)
		if err != nil {
			return "", fsError(rp, "resolve", err)
		}
		// The target is appended, not joined: joining would clean ".."
		// lexically, which is wrong after a symlinked directory. os.Root
		// walks it as the kernel would and refuses it if it escapes.
		var next string
		if filepath.IsAbs(target) {
			var ok bool
			if next, ok = within(rp.rootReal, target); !ok {
				return "", escapes(rp)
			}
		} else {
			dir, _ := splitRel(rel)
			next = dir + target
		}
		rel = next
	}
	return "", pathError(schema.CodeInvalidParams, rp.agent, "workspace: too many levels of symbolic links in %s", rp.agent)
}

// splitRel splits rel after its last separator without cleaning it (see
// followFinalLinks); dir is "" or ends in a separator.
func splitRel(rel string) (dir, base string) {
	i := strings.LastIndexByte(rel, filepath.Separator)
	return rel[:i+1], rel[i+1:]
}

func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// fsError turns an os.Root error into the error sent to the agent.
func fsError(rp *resolvedPath, op string, err error) error {
	switch {
	case isNotFound(err):
		u := url.URL{Scheme: "file", Path: rp.agent}
		return &schema.Error{
			Code:    schema.CodeResourceNotFound,
			Message: fmt.Sprintf("workspace: %s: file not found: %s", op, rp.agent),
			Data:    mustJSON(map[string]string{"uri": u.String()}),
		}
	case isEscape(err):
		return escapes(rp)
	case errors.Is(err, fs.ErrPermission):
		return pathError(schema.CodeInternalError, rp.agent, "workspace: %s: permission denied: %s", op, rp.agent)
	}
	return pathError(schema.CodeInternalError, rp.agent, "workspace: %s %s: %v", op, rp.agent, unwrapPathError(err))
}

// isEscape recognizes os.Root's refusal. Its error value is unexported, so
// the message is all there is to go on.
func isEscape(err error) bool {
	return strings.Contains(err.Error(), "path escapes from parent")
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func escapes(rp *resolvedPath) error {
	return pathError(schema.CodeInvalidParams, rp.agent, "workspace: %s resolves outside the workspace roots", rp.agent)
}

func notText(rp *resolvedPath) error {
	return pathError(schema.CodeInvalidParams, rp.agent, "workspace: %s is not a text file (binary or not UTF-8)", rp.agent)
}

func tooLarge(rp *resolvedPath, size, max int64) error {
	data := map[string]any{"path": rp.agent, "limit": "workspace.FS.MaxReadBytes", "max": max}
	if size >= 0 {
		return limitExceeded(schema.CodeInvalidParams, data, "workspace: %s is too large (%d bytes, limit %d); read it in parts with line and limit", rp.agent, size, max)
	}
	return limitExceeded(schema.CodeInvalidParams, data, "workspace: %s: requested content exceeds %d bytes; read fewer lines", rp.agent, max)
}

// limitExceeded is a handler's refusal at one of its own limits: the agent
// is answered with code, the message (which names the limit) and data, and
// locally errors.Is(err, schema.ErrLimitExceeded) holds.
func limitExceeded(code int64, data any, format string, args ...any) error {
	return &handlerLimitError{&schema.Error{Code: code, Message: fmt.Sprintf(format, args...), Data: mustJSON(data)}}
}

type handlerLimitError struct{ e *schema.Error }

func (l *handlerLimitError) Error() string   { return l.e.Message }
func (l *handlerLimitError) Unwrap() []error { return []error{l.e, schema.ErrLimitExceeded} }

func pathError(code int64, path, format string, args ...any) *schema.Error {
	return &schema.Error{
		Code:    code,
		Message: fmt.Sprintf(format, args...),
		Data:    mustJSON(map[string]string{"path": path}),
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
