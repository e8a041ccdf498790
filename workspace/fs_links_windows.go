package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is the number of names of the file f is open on, asked of its
// handle (os.File.Stat does not report it).
func linkCount(f *os.File, _ fs.FileInfo) (uint64, bool) {
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return 0, false
	}
	return uint64(d.NumberOfLinks), true
}
