// Package cputime reads the CPU time the process has used, for the
// benchmarks that report it beside wall time (on a shared machine the
// wall time of a run drifts more than the work it does).
package cputime
