package postgres_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverCPU returns the CPU time used so far by the test cluster's
// server (the postmaster and its live children, from /proc; clock ticks
// of 10 ms), and false when AGENTMEM_TEST_PGDIR does not name a cluster
// of scripts/pg-test.sh.
func serverCPU() (time.Duration, bool) {
	dir := os.Getenv("AGENTMEM_TEST_PGDIR")
	if dir == "" {
		return 0, false
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	master := strings.SplitN(string(pidFile), "\n", 2)[0]
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The fields after the command (which may hold spaces): state,
		// ppid, … utime and stime are the 12th and 13th of them.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 || f[1] != master && filepath.Base(filepath.Dir(p)) != master {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}
