package registry

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes a lock on f's first byte without waiting; Windows releases
// it when the process dies.
func tryLock(f *os.File) (bool, error) {
	var ov windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)
	if err == windows.ERROR_LOCK_VIOLATION {
		return false, nil
	}
	return err == nil, err
}

// staleEnough: with locks, an unlocked download is dead whatever its age.
func staleEnough(*os.File) bool { return true }

// removeLocked closes f, then removes p: Windows removes no open file.
func removeLocked(f *os.File, p string) {
	f.Close()
	os.Remove(p)
}

// checkOwned checks nothing on Windows: the cache is under the user's
// %LocalAppData%, whose ACL admits only the user, SYSTEM and
// administrators; ownership and mode bits do not carry the Unix meaning.
func checkOwned(string, fs.FileInfo) error { return nil }
