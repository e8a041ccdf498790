//go:build windows

package winjob

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// Job is a job object that kills its processes when its last handle closes.
type Job struct{ h windows.Handle }

// Start creates a job and puts process pid in it. Processes pid started
// before it joined (it has only just been started when callers get here)
// stay outside.
func Start(pid int) (*Job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	j := &Job{h}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		j.Close()
		return nil, err
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		j.Close()
		return nil, err
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(h, p); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// Terminate ends every process in the job with exit code code.
func (j *Job) Terminate(code uint32) error {
	return windows.TerminateJobObject(j.h, code)
}

// accounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which x/sys/windows
// does not define.
type accounting struct {
	TotalUserTime, TotalKernelTime                     int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount                                uint32
	TotalProcesses                                     uint32
	ActiveProcesses                                    uint32
	TotalTerminatedProcesses                           uint32
}

// Active reports whether any process of the job still runs.
func (j *Job) Active() bool {
	var a accounting
	err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&a)), uint32(unsafe.Sizeof(a)), nil)
	return err == nil && a.ActiveProcesses > 0
}

// Close closes the job's handle, which kills whatever still runs in it.
func (j *Job) Close() error {
	return windows.CloseHandle(j.h)
}
