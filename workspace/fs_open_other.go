//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

// openRegular opens base, a single name in dir, once and checks on the
// descriptor that it is a regular file. Windows has no FIFOs in the file
// system (its named pipes live apart, under \\.\pipe\), so there is no
// open to keep from blocking; a symlink swapped in at base is followed by
// os.Root, within the root.
//
// hook, called with "opened" between the open and the stat, is the test
// hook.
func openRegular(dir *os.Root, base string, hook func(string)) (*os.File, fs.FileInfo, error) {
	f, err := dir.OpenFile(base, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	hook("opened")
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &notRegularError{mode: fi.Mode().Type()}
	}
	return f, fi, nil
}
