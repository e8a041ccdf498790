//go:build !linux

package workspace

import "errors"

// waitNoReap needs waitid's Linux siginfo layout; elsewhere the terminal's
// watcher falls back to reaping the process with exec.Cmd.Wait.
func waitNoReap(int) (exitStatus, error) {
	return exitStatus{}, errors.ErrUnsupported
}
