package acp

import "time"

// RunTestAgent is runTestAgent for TestMain, which is in the external test
// package.
var RunTestAgent = runTestAgent

// RunTestHost and TestHostEnv let TestMain run the test binary as a host
// process (see lifecycle_hostile_test.go).
var RunTestHost = runTestHost

const TestHostEnv = testHostEnv

// ChildrenKept is how many children s holds, released ones included.
func ChildrenKept(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sub.children)
}

// SetRestartClock makes p's backoff wait on after and its restart budget
// count by now, so tests see the backoff without sleeping.
func SetRestartClock(p *RestartPolicy, after func(time.Duration) <-chan time.Time, now func() time.Time) {
	p.after, p.now = after, now
}
