package acp

// RunTestAgent is runTestAgent for TestMain, which is in the external test
// package.
var RunTestAgent = runTestAgent
