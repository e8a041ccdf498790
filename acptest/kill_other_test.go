//go:build !unix

package acptest

import "os"

// sigkill kills process pid. Without process groups a negative pid (a
// group on Unix) reaches nothing.
func sigkill(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// exists reports whether process pid exists.
func exists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err == nil {
		p.Release()
	}
	return err == nil
}
