package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Install makes the agent's binary for the registry's platform
// ([Options.Platform]) available locally and returns the path of its
// executable. The first call downloads
// the archive, checks it (its sha256 when the registry gives one, and the
// size limits), unpacks it into a temporary directory and renames that into
// place, so a cached install is always complete. Later calls, in this
// process or another, use the cached install without the network.
// Concurrent installs of the same agent are safe: one rename wins and the
// others use its result.
//
// The cache is per agent version and platform:
// <CacheDir>/agents/<id>/<version>/<platform>-<hash of the archive URL,
// sha256 and cmd>/, holding the unpacked archive under files/ and a
// manifest of the executable's size, mode and modification time. Installs
// of other versions are left in place.
//
// A cached install is checked before use. One whose executable no longer
// matches its manifest (deleted, changed, from an older layout) is
// installed again, the new install renamed into place as the first was.
// What killed installs leave (a .download-* file no process holds locked
// and its .unpack-* directory) is removed by the next install of that
// agent version. On Unix, a cached executable, or a directory from it up
// to CacheDir, that is not owned by the current user or is writable by
// group or others (a directory with the sticky bit excepted, as only the
// owner can then rename its entries) fails with [ErrUnsafeCache] and is
// not run. Windows checks no ownership: the cache lives under the user's
// profile, whose ACL keeps other users out.
func (r *Registry) Install(ctx context.Context, a *Agent) (string, error) {
	o := r.options()
	t, ok := a.Distribution.Binary[o.Platform]
	if !ok {
		return "", unsupported(a, o)
	}
	exe, err := install(ctx, a, o, t, r.origin)
	if err != nil {
		return "", &Error{AgentID: a.ID, Err: err}
	}
	return exe, nil
}

func install(ctx context.Context, a *Agent, o *Options, t BinaryTarget, origin *url.URL) (string, error) {
	cmdPath, err := local(strings.TrimPrefix(t.Cmd, "./"))
	if err != nil {
		return "", fmt.Errorf("%w: cmd %q is not a path inside the archive", ErrInvalid, t.Cmd)
	}
	if err := a.validate(); err != nil { // ids and versions become directory names
		return "", err
	}
	u, err := url.Parse(t.Archive)
	if err != nil {
		return "", fmt.Errorf("%w: archive URL: %v", ErrInvalid, err)
	}
	if err := archiveAllowed(origin, u); err != nil {
		return "", err
	}
	cache, err := o.cacheDir()
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(t.Archive + "\n" + strings.ToLower(t.SHA256) + "\n" + t.Cmd))
	final := filepath.Join(cache, "agents", a.ID, a.Version, o.Platform+"-"+hex.EncodeToString(key[:6]))
	exe, err := cachedExe(cache, final)
	if err == nil || errors.Is(err, ErrUnsafeCache) {
		return exe, err
	}

	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	if err := checkOwnedPath(cache, parent); err != nil {
		return "", err
	}
	cleanLeftovers(parent)
	archive, suffix, err := newDownload(parent)
	if err != nil {
		return "", err
	}
	defer func() { // after the unpack directory is gone (see cleanLeftovers)
		os.Remove(archive.Name())
		archive.Close()
	}()
	if o.OnDownload != nil {
		o.OnDownload(a, t.Archive)
	}
	sum := sha256.New()
	var report func(done, total int64)
	if o.Progress != nil {
		report = func(done, total int64) { o.Progress(Progress{Agent: a, URL: t.Archive, Done: done, Total: total}) }
	}
	if err := download(ctx, o, u, io.MultiWriter(archive, sum), report); err != nil {
		return "", err
	}
	if got := hex.EncodeToString(sum.Sum(nil)); t.SHA256 != "" && !strings.EqualFold(got, t.SHA256) {
		return "", fmt.Errorf("%w: %s has sha256 %s, the registry says %s", ErrChecksum, u.Redacted(), got, strings.ToLower(t.SHA256))
	}
	head := make([]byte, 8)
	n, _ := archive.ReadAt(head, 0)
	if _, err := archive.Seek(0, io.SeekStart); err != nil {
		return "", err
	}

	tmp := filepath.Join(parent, unpackPrefix+suffix)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone already when the rename succeeded
	files := filepath.Join(tmp, filesDir)
	if err := os.Mkdir(files, 0o755); err != nil {
		return "", err
	}
	if err := unpack(ctx, archive, archiveFormat(t.Archive, head[:n]), filepath.ToSlash(cmdPath), files, o); err != nil {
		return "", err
	}
	exe, err = findCmd(files, cmdPath)
	if err != nil {
		return "", fmt.Errorf("the archive has no %s: %w", t.Cmd, err)
	}
	// Zip archives often carry no permission bits.
	if fi, err := os.Stat(exe); err == nil && fi.Mode()&0o111 == 0 && runtime.GOOS != "windows" {
		if err := os.Chmod(exe, fi.Mode()|0o755); err != nil {
			return "", err
		}
	}
	if err := writeManifest(tmp, exe); err != nil {
		return "", err
	}
	return replaceInstall(cache, tmp, final)
}

// replaceInstall renames the complete install at tmp to final and returns
// its executable. A broken install at final (see cachedExe) is first moved
// aside, to be removed now or by a later cleanLeftovers; when another
// resolver installed final meanwhile, its install is used.
func replaceInstall(cache, tmp, final string) (string, error) {
	for range 3 {
		err := os.Rename(tmp, final)
		if err == nil {
			return cachedExe(cache, final)
		}
		exe, cerr := cachedExe(cache, final)
		switch {
		case cerr == nil || errors.Is(cerr, ErrUnsafeCache):
			return exe, cerr
		case errors.Is(cerr, fs.ErrNotExist):
			continue // moved aside by another resolver: try again
		}
		aside := filepath.Join(filepath.Dir(final), stalePrefix+filepath.Base(tmp)[len(unpackPrefix):])
		if err := os.Rename(final, aside); err == nil {
			os.RemoveAll(aside)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("replacing the broken install %s: %w", final, err)
		}
	}
	return "", fmt.Errorf("could not install into %s: other resolvers keep replacing it", final)
}

// findCmd returns the executable named by cmd inside dir, checking that it
// is a regular file that resolves inside dir. When the path does not exist
// and exactly one file in dir has cmd's trailing path elements, that file is
// used: archives often wrap their content in a versioned top directory.
func findCmd(dir, cmd string) (string, error) {
	p := filepath.Join(dir, cmd)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		var found []string
		suffix := string(filepath.Separator) + cmd
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, suffix) {
				found = append(found, path)
			}
			return nil
		})
		if len(found) != 1 {
			return "", fs.ErrNotExist
		}
		p = found[0]
	}
	realExe, err := resolvesInside(dir, p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(realExe)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", cmd)
	}
	return p, nil
}

// fetchError names the URL a request failed for. A refused redirect is
// returned as is (it says where the redirect went); other url.Errors are
// unwrapped, since they repeat the method and the URL.
func fetchError(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if errors.Is(ue.Err, ErrInsecureURL) {
			return ue.Err
		}
		err = ue.Err
	}
	return fmt.Errorf("fetching %s: %w", u.Redacted(), err)
}
