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
// sha256 and cmd>/. Installs of other versions are left in place.
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
	if exe, err := findCmd(final, cmdPath); err == nil {
		return exe, nil
	}

	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	archive, err := os.CreateTemp(parent, ".download-*")
	if err != nil {
		return "", err
	}
	defer func() {
		archive.Close()
		os.Remove(archive.Name())
	}()
	if o.OnDownload != nil {
		o.OnDownload(a, t.Archive)
	}
	sum := sha256.New()
	if err := download(ctx, o, u, io.MultiWriter(archive, sum)); err != nil {
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

	tmp, err := os.MkdirTemp(parent, ".unpack-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone already when the rename succeeded
	if err := unpack(ctx, archive, archiveFormat(t.Archive, head[:n]), filepath.ToSlash(cmdPath), tmp, o); err != nil {
		return "", err
	}
	exe, err := findCmd(tmp, cmdPath)
	if err != nil {
		return "", fmt.Errorf("the archive has no %s: %w", t.Cmd, err)
	}
	// Zip archives often carry no permission bits.
	if fi, err := os.Stat(exe); err == nil && fi.Mode()&0o111 == 0 && runtime.GOOS != "windows" {
		if err := os.Chmod(exe, fi.Mode()|0o755); err != nil {
			return "", err
		}
	}
	rel, err := filepath.Rel(tmp, exe)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another resolver may have installed it first; use that one.
		if exe, ferr := findCmd(final, cmdPath); ferr == nil {
			return exe, nil
		}
		return "", err
	}
	return filepath.Join(final, rel), nil
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
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	realExe, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(realDir, realExe); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s resolves outside the archive", ErrUnsafeArchive, cmd)
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
