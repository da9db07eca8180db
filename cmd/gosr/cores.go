package main

import "runtime"

// defaultInstances is the runtimes per model when nothing says: the CPUs
// this process may use (Go sets GOMAXPROCS from the container's CPU
// limit).
func defaultInstances() int { return runtime.GOMAXPROCS(0) }
