package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrUnsafeCache: a cached install, or a directory leading to it, that
// another user could change (see [Registry.Install]); it is not run.
var ErrUnsafeCache = errors.New("registry: unsafe cache")

// An install directory holds the unpacked archive under filesDir and, next
// to it, the manifest recording what the executable was when installed.
// Both are renamed into place together, so a manifest always describes a
// complete install.
const (
	filesDir     = "files"
	manifestName = "install.json"
)

// manifest is what an install recorded of its executable. A cached install
// whose executable no longer matches (deleted, truncated, replaced, its
// mode changed) is installed again.
type manifest struct {
	Cmd     string      `json:"cmd"` // slash-separated, below filesDir
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"modTime"`
}

var errBrokenInstall = errors.New("registry: cached install does not match its manifest")

func writeManifest(dir, exe string) error {
	fi, err := os.Stat(exe)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Join(dir, filesDir), exe)
	if err != nil {
		return err
	}
	b, err := json.Marshal(manifest{Cmd: filepath.ToSlash(rel), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestName), b, 0o644)
}

// cachedExe returns the executable of the install at dir when its manifest
// says it is intact and it is safe to run; errBrokenInstall when it is not
// intact (or not there: fs.ErrNotExist), ErrUnsafeCache when another user
// could have changed it.
func cachedExe(cache, dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Lstat(dir); errors.Is(derr, fs.ErrNotExist) {
				return "", err
			}
		}
		return "", errBrokenInstall // a directory without a manifest: an older layout
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Cmd == "" {
		return "", errBrokenInstall
	}
	rel, err := local(m.Cmd)
	if err != nil {
		return "", errBrokenInstall
	}
	files := filepath.Join(dir, filesDir)
	exe := filepath.Join(files, rel)
	real, err := resolvesInside(files, exe)
	if err != nil {
		return "", errBrokenInstall
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != m.Size || fi.Mode() != m.Mode || !fi.ModTime().Equal(m.ModTime) {
		return "", errBrokenInstall
	}
	if err := checkOwnedPath(cache, real); err != nil {
		return "", err
	}
	return exe, nil
}

// resolvesInside returns p with its links resolved, checking it stays
// inside dir.
func resolvesInside(dir, p string) (string, error) {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s resolves outside the archive", ErrUnsafeArchive, p)
	}
	return real, nil
}

// checkOwnedPath checks p and each directory from p's up to cache (the
// cache directory included) with checkOwned. A path outside cache is
// checked alone with its directory.
func checkOwnedPath(cache, p string) error {
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := checkOwned(p, fi); err != nil {
			return err
		}
		rel, err := filepath.Rel(cache, p)
		if err != nil || rel == "." || !filepath.IsLocal(rel) {
			return nil
		}
		p = filepath.Dir(p)
	}
}

// Prefixes of what an install leaves next to the install directories
// while it runs, and of broken installs moved aside to be replaced.
const (
	downloadPrefix = ".download-"
	unpackPrefix   = ".unpack-"
	stalePrefix    = ".stale-"
)

// newDownload creates the file an archive is downloaded into, locked for
// as long as it is open: the lock is how a later install tells a running
// install's files from a killed one's (see cleanLeftovers). It returns the
// file and the suffix its unpack directory shares.
func newDownload(parent string) (*os.File, string, error) {
	for range 3 {
		f, err := os.CreateTemp(parent, downloadPrefix+"*")
		if err != nil {
			return nil, "", err
		}
		if ok, err := tryLock(f); err != nil || !ok {
			// Only a cleaner holds a fresh file's lock: it is removing it.
			f.Close()
			if err != nil {
				return nil, "", err
			}
			continue
		}
		// A cleaner may have taken the file for a killed install's
		// between its creation and the lock, and removed it.
		mine, err1 := f.Stat()
		named, err2 := os.Stat(f.Name())
		if err1 == nil && err2 == nil && os.SameFile(mine, named) {
			return f, strings.TrimPrefix(filepath.Base(f.Name()), downloadPrefix), nil
		}
		f.Close()
	}
	return nil, "", errors.New("registry: could not create a download file (removed as it was created)")
}

// cleanLeftovers removes, in an agent version's directory, what killed
// installs left: downloads no process holds locked, with their unpack
// directories; unpack directories with no download; broken installs moved
// aside. Errors are ignored: a leftover still in use (an agent running
// from a moved-aside install on Windows) is tried again next time.
func cleanLeftovers(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(parent, name)
		switch {
		case strings.HasPrefix(name, downloadPrefix):
			removeDeadDownload(p, filepath.Join(parent, unpackPrefix+strings.TrimPrefix(name, downloadPrefix)))
		case strings.HasPrefix(name, unpackPrefix):
			// A running install creates its download before its unpack
			// directory and removes it after, so an unpack directory
			// without one is dead; one with one goes with it above.
			if _, err := os.Lstat(filepath.Join(parent, downloadPrefix+strings.TrimPrefix(name, unpackPrefix))); errors.Is(err, fs.ErrNotExist) {
				os.RemoveAll(p)
			}
		case strings.HasPrefix(name, stalePrefix):
			os.RemoveAll(p)
		}
	}
}

// removeDeadDownload removes the download at p, and its unpack directory,
// when no process holds its lock.
func removeDeadDownload(p, unpackDir string) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return
	}
	ok, err := tryLock(f)
	if err != nil || !ok || !staleEnough(f) {
		f.Close()
		return
	}
	os.RemoveAll(unpackDir)
	removeLocked(f, p)
}
