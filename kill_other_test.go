//go:build !unix

package acp

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
