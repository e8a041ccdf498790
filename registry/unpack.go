package registry

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Archive formats.
const (
	formatRaw = "raw"
	formatTar = "tar"
	formatTgz = "tar.gz"
	formatTbz = "tar.bz2"
	formatZip = "zip"
)

// archiveFormat picks the format from the URL's file name, as the registry
// names them, and from the content's first bytes when the name says
// nothing; anything else is a bare executable.
func archiveFormat(archiveURL string, head []byte) string {
	name := archiveURL
	if u, err := url.Parse(archiveURL); err == nil {
		name = u.Path
	}
	name = strings.ToLower(name)
	switch {
	case strings.HasSuffix(name, ".zip"):
		return formatZip
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return formatTgz
	case strings.HasSuffix(name, ".tar.bz2"), strings.HasSuffix(name, ".tbz2"):
		return formatTbz
	case strings.HasSuffix(name, ".tar"):
		return formatTar
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return formatZip
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return formatTgz
	case bytes.HasPrefix(head, []byte("BZh")):
		return formatTbz
	}
	return formatRaw
}

// unpacker writes archive entries below dir. Every name is checked
// lexically and every write goes through an [os.Root], so nothing lands
// outside dir; symbolic links are created only after every file, so no
// write can go through one, and each must then resolve to an existing path
// inside dir.
type unpacker struct {
	ctx        context.Context // checked between entries
	dir        string
	root       *os.Root
	maxBytes   int64
	written    int64
	maxEntries int
	entries    int
	links      [][2]string // name, target
}

func newUnpacker(ctx context.Context, dir string, o *Options) (*unpacker, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &unpacker{ctx: ctx, dir: dir, root: root, maxBytes: o.MaxUnpackedBytes, maxEntries: o.MaxArchiveEntries}, nil
}

func (u *unpacker) close() { u.root.Close() }

func unsafeEntry(name, why string) error {
	return fmt.Errorf("%w: entry %q %s", ErrUnsafeArchive, name, why)
}

// local turns an archive name into a relative OS path inside the root.
func local(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return "", unsafeEntry(name, "has an absolute path")
	}
	p := filepath.Clean(filepath.FromSlash(name))
	if !filepath.IsLocal(p) {
		return "", unsafeEntry(name, "points outside the archive")
	}
	return p, nil
}

func (u *unpacker) count() error {
	if err := u.ctx.Err(); err != nil {
		return err
	}
	u.entries++
	if u.entries > u.maxEntries {
		return limitExceeded("archive has more than MaxArchiveEntries (%d) entries", u.maxEntries)
	}
	return nil
}

func (u *unpacker) mkdir(name string) error {
	p, err := local(name)
	if err != nil || p == "." {
		return err
	}
	return u.root.MkdirAll(p, 0o755)
}

// file writes one regular file from r, counting its bytes against the
// unpacked-size limit whatever the archive claims its size is.
func (u *unpacker) file(name string, mode fs.FileMode, r io.Reader) error {
	p, err := local(name)
	if err != nil {
		return err
	}
	if d := filepath.Dir(p); d != "." {
		if err := u.root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := u.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, u.maxBytes-u.written+1))
	u.written += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && u.written > u.maxBytes {
		err = limitExceeded("archive unpacks to more than MaxUnpackedBytes (%d bytes)", u.maxBytes)
	}
	return err
}

// symlink records a link to create once every file is written.
func (u *unpacker) symlink(name, target string) error {
	p, err := local(name)
	if err != nil {
		return err
	}
	t := filepath.FromSlash(target)
	if target == "" || filepath.IsAbs(t) || filepath.VolumeName(t) != "" || strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) {
		return unsafeEntry(name, "is a link to an absolute path")
	}
	if !filepath.IsLocal(filepath.Join(filepath.Dir(p), t)) {
		return unsafeEntry(name, "is a link pointing outside the archive")
	}
	u.links = append(u.links, [2]string{p, t})
	return nil
}

// hardlink copies an already unpacked file: a copy cannot alias anything
// outside, and counts against the size limit like any file.
func (u *unpacker) hardlink(name, target string) error {
	tp, err := local(target)
	if err != nil {
		return unsafeEntry(name, "is a hard link pointing outside the archive")
	}
	fi, err := u.root.Lstat(tp)
	if err != nil || !fi.Mode().IsRegular() {
		return unsafeEntry(name, "is a hard link to something that is not an unpacked file")
	}
	src, err := u.root.Open(tp)
	if err != nil {
		return err
	}
	defer src.Close()
	return u.file(name, fi.Mode(), src)
}

// finish creates the recorded links and checks each resolves inside dir.
func (u *unpacker) finish() error {
	for _, l := range u.links {
		if d := filepath.Dir(l[0]); d != "." {
			if err := u.root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if _, err := u.root.Lstat(l[0]); err == nil {
			return unsafeEntry(filepath.ToSlash(l[0]), "is a link where the archive also has a file or directory")
		}
		if err := u.root.Symlink(l[1], l[0]); err != nil {
			return err
		}
	}
	real, err := filepath.EvalSymlinks(u.dir)
	if err != nil {
		return err
	}
	for _, l := range u.links {
		got, err := filepath.EvalSymlinks(filepath.Join(u.dir, l[0]))
		if err != nil {
			return unsafeEntry(filepath.ToSlash(l[0]), "is a link that does not resolve inside the archive")
		}
		if rel, err := filepath.Rel(real, got); err != nil || !filepath.IsLocal(rel) {
			return unsafeEntry(filepath.ToSlash(l[0]), "is a link pointing outside the archive")
		}
	}
	return nil
}

// unpack unpacks the archive in f (format as archiveFormat says) into dir.
// A bare executable is written as rawName (slash-separated).
func unpack(ctx context.Context, f *os.File, format, rawName, dir string, o *Options) error {
	u, err := newUnpacker(ctx, dir, o)
	if err != nil {
		return err
	}
	defer u.close()
	switch format {
	case formatRaw:
		if err := u.count(); err != nil {
			return err
		}
		err = u.file(rawName, 0o755, f)
	case formatZip:
		err = u.zip(f)
	case formatTgz:
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(f); err == nil {
			err = u.tar(zr)
		}
	case formatTbz:
		err = u.tar(bzip2.NewReader(f))
	case formatTar:
		err = u.tar(f)
	}
	if err != nil {
		return err
	}
	return u.finish()
}

func (u *unpacker) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, tar.ErrInsecurePath) {
			return unsafeEntry(h.Name, "has an unsafe path")
		}
		if err != nil {
			return fmt.Errorf("registry: reading the archive: %w", err)
		}
		if err := u.count(); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeReg: // the reader reports the old TypeRegA as TypeReg
			err = u.file(h.Name, fs.FileMode(h.Mode), tr)
		case tar.TypeDir:
			err = u.mkdir(h.Name)
		case tar.TypeSymlink:
			err = u.symlink(h.Name, h.Linkname)
		case tar.TypeLink:
			err = u.hardlink(h.Name, h.Linkname)
		case tar.TypeXGlobalHeader:
		default:
			err = unsafeEntry(h.Name, fmt.Sprintf("has type %q, which an agent archive does not need", h.Typeflag))
		}
		if err != nil {
			return err
		}
	}
}

// maxLinkTarget bounds a zip symlink's target, which is the entry's
// content; a longer one is refused as unsafe (no real link needs it).
const maxLinkTarget = 4096

func (u *unpacker) zip(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	walked, err := checkZipDirectory(f, fi.Size(), u.maxEntries)
	if err != nil {
		return err
	}
	// archive/zip reads the end record (searching up to 64 KiB and some
	// back from the end) and the directory through a 4 KiB buffer.
	br := &budgetReaderAt{r: f}
	br.budget.Store(walked + 256<<10)
	zr, err := zip.NewReader(br, fi.Size())
	br.budget.Store(-1) // the entries' content is bounded by MaxUnpackedBytes
	if errors.Is(err, errZipDirGrew) {
		return limitExceeded("%v (MaxArchiveEntries × %d bytes)", err, zipDirBytesPerEntry)
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are checked below
		return fmt.Errorf("registry: reading the archive: %w", err)
	}
	if len(zr.File) > u.maxEntries {
		return limitExceeded("archive has more than MaxArchiveEntries (%d) entries", u.maxEntries)
	}
	for _, zf := range zr.File {
		if err := u.count(); err != nil {
			return err
		}
		if err := u.zipEntry(zf); err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) zipEntry(zf *zip.File) error {
	mode := zf.Mode()
	switch {
	case mode.IsDir():
		return u.mkdir(zf.Name)
	case mode&fs.ModeSymlink != 0:
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget+1))
		if err != nil {
			return err
		}
		if len(target) > maxLinkTarget {
			return unsafeEntry(zf.Name, "is a link with an overlong target")
		}
		return u.symlink(zf.Name, string(target))
	case !mode.IsRegular():
		return unsafeEntry(zf.Name, fmt.Sprintf("has mode %v, which an agent archive does not need", mode))
	}
	if zf.UncompressedSize64 > uint64(u.maxBytes-u.written) {
		return limitExceeded("archive unpacks to more than MaxUnpackedBytes (%d bytes)", u.maxBytes)
	}
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	return u.file(zf.Name, mode, rc)
}
