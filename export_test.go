package acp

// RunTestAgent is runTestAgent for TestMain, which is in the external test
// package.
var RunTestAgent = runTestAgent

// RunTestHost and TestHostEnv let TestMain run the test binary as a host
// process (see hostile_lifecycle_test.go).
var RunTestHost = runTestHost

const TestHostEnv = testHostEnv
