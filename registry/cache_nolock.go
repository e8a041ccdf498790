//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package registry

import (
	"os"
	"time"
)

// Without flock, a download counts as a killed install's once it has not
// been written to for a day.
func tryLock(*os.File) (bool, error) { return true, nil }

func staleEnough(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && time.Since(fi.ModTime()) > 24*time.Hour
}

func removeLocked(f *os.File, p string) {
	f.Close()
	os.Remove(p)
}
