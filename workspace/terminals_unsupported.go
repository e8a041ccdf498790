//go:build !unix && !windows

package workspace

import (
	"errors"
	"os"
	"os/exec"
)

// Systems with neither process groups nor job objects cannot end a
// command's tree, so no command is run: terminal/create fails.
type procTree struct{}

func prepareTree(*exec.Cmd) {}

func newTree(*exec.Cmd) (procTree, error) {
	return procTree{}, errors.New("terminals are not supported on this system")
}

func (procTree) kill() error { return nil }
func (procTree) close()      {}

func statusOf(ps *os.ProcessState) exitStatus {
	return exitStatus{code: uint32(ps.ExitCode())}
}

func lookCommand(name, dir string, env []string) (string, error) {
	return "", exec.ErrNotFound
}
