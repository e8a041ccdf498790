//go:build unix && !linux

package acp

// groupAlive reports whether any process of group pgid still exists
// (zombies included: without /proc there is no telling them apart).
func groupAlive(pgid int) bool { return signalGroup(pgid, 0) == nil }
