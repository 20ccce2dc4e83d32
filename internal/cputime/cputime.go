// Package cputime reads the CPU time this process has used, on every
// platform the relay builds for: the benchmarks and developer tools
// divide by it rather than by wall time, so that their per-core figures
// hold on a machine whose other cores are busy with something else.
package cputime
