//go:build linux

package e2e

import "testing"

// TestRestartV2: TestRestart with the agents' v2 builds (ProtocolVersion
// 2; Linux-only like the v2 client tests): session/resume brings the
// session back after the SIGKILL.
func TestRestartV2(t *testing.T) {
	for _, ag := range v2Agents() {
		for _, midTurn := range []bool{false, true} {
			name := ag.name + "/after-turn"
			if midTurn {
				name = ag.name + "/mid-turn"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testRestart(t, ag, midTurn, startV2Client, true)
			})
		}
	}
}
