//go:build !unix && !windows

package workspace

import (
	"os"
	"os/exec"
)

// Systems with neither process groups nor job objects cannot end a
// command's tree, so no command is run: no command is found, and one that
// were found would be refused once started (procgroup.Group.Tracked).

func statusOf(ps *os.ProcessState) exitStatus {
	return exitStatus{code: uint32(ps.ExitCode())}
}

func lookCommand(name, dir string, env []string) (string, error) {
	return "", exec.ErrNotFound
}
