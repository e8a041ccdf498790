//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package registry

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes f's exclusive flock without waiting. The kernel releases
// it when the process dies, however it dies, which is what tells a killed
// install's download from a running one's.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// staleEnough: with locks, an unlocked download is dead whatever its age.
func staleEnough(*os.File) bool { return true }

// removeLocked removes p while holding its lock, then closes f.
func removeLocked(f *os.File, p string) {
	os.Remove(p)
	f.Close()
}
