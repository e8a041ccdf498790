package acp

// RunTestAgent is runTestAgent for TestMain, which is in the external test
// package.
var RunTestAgent = runTestAgent

// RunTestHost and TestHostEnv let TestMain run the test binary as a host
// process (see hostile_lifecycle_test.go).
var RunTestHost = runTestHost

const TestHostEnv = testHostEnv

// ChildrenKept is how many children s holds, released ones included.
func ChildrenKept(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.children)
}
