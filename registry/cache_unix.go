//go:build unix

package registry

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// currentUID is the user installs must belong to; a variable for tests.
var currentUID = os.Geteuid

// checkOwned refuses a path another user could change: one not owned by
// this user, or writable by its group or by others. A directory writable
// by others is accepted when it has the sticky bit (as /tmp does): others
// may then add entries but not rename or remove ours, and every entry on
// the way to an executable is checked in turn.
func checkOwned(p string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := currentUID(); int(st.Uid) != uid {
		return fmt.Errorf("%w: %s belongs to uid %d, not to this user (uid %d); remove it or run as its owner", ErrUnsafeCache, p, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		return fmt.Errorf("%w: %s is writable by other users (mode %v); remove it or chmod go-w", ErrUnsafeCache, p, fi.Mode())
	}
	return nil
}
