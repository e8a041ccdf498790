// Package winjob holds the Windows job objects that stand in for process
// groups there: every process a job's member starts joins the job, so the
// whole tree can be ended at once, and a job whose last handle closes (this
// process dying included) kills what is left in it. On other systems the
// package is empty.
package winjob
