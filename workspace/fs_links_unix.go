//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is the number of names of the file f is open on, from the
// fstat that made fi.
func linkCount(_ *os.File, fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
