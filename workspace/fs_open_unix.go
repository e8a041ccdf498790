//go:build unix

package workspace

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens base, a single name in dir, for reading with one
// openat(2) on dir's descriptor and checks the result on that descriptor:
//
//   - O_NOFOLLOW: a symlink swapped in at base after FS resolved the links
//     is refused (os.Root would follow it), so what is read is what the
//     write's rename then replaces.
//   - O_NONBLOCK: opening a FIFO does not wait for a writer (a blocking
//     open(2) cannot be interrupted, not even by the request's context);
//     O_NOCTTY: a terminal device does not become ours.
//   - fstat: only a regular file is read; a FIFO, socket, device or
//     directory is refused before any read, so no read can block on one.
//     O_NONBLOCK is then cleared, as it means nothing for a regular file.
//
// hook, called with "opened" between openat and fstat, is the test hook.
func openRegular(dir *os.Root, base string, hook func(string)) (*os.File, fs.FileInfo, error) {
	d, err := dir.Open(".")
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	fd := -1
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), base, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	switch oerr {
	case nil:
	case unix.ELOOP, unix.EMLINK: // O_NOFOLLOW met a symlink (EMLINK on FreeBSD)
		return nil, nil, &notRegularError{mode: fs.ModeSymlink}
	default:
		return nil, nil, &fs.PathError{Op: "openat", Path: base, Err: oerr}
	}
	hook("opened")
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "fstat", Path: base, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, nil, &notRegularError{mode: modeOf(uint32(st.Mode))}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, nil, &fs.PathError{Op: "fcntl", Path: base, Err: err}
	}
	f := os.NewFile(uintptr(fd), base)
	fi, err := f.Stat() // the same descriptor, for a portable FileInfo
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// modeOf maps st_mode's file type to fs.FileMode bits, for the message.
func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
