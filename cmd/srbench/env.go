package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/pyfallback"
)

// The environment variables srbench reads, each mapped onto an option of
// the package that takes it; the packages themselves read none
// (docs/environment.md lists every GOSR_ variable).
const (
	envLibtorchShim    = "GOSR_LIBTORCH_SHIM"     // libtorch.Options.Shim
	envLibPython       = "GOSR_LIBPYTHON"         // pyfallback.Options.LibPython
	envPythonSharedLib = "GOSR_PYTHON_SHARED_LIB" // pyfallback.Options.SharedLibrary
	envPythonHandoff   = "GOSR_PYTHON_HANDOFF"    // pyfallback.Options.Handoff
	envPythonSpareP    = "GOSR_PYTHON_SPARE_P"    // pyfallback.Options.SpareProc
	envORTLib          = "GOSR_ORT_LIB"           // ort.Options.Library (compare -ort)
)

// envBool reads a boolean variable: def when unset or empty, else one of
// strconv.ParseBool's spellings (1, true, 0, false, ...).
func envBool(name string, def bool) (bool, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 or 0 (true or false)", name, v)
	}
	return b, nil
}

// libtorchOptions are the libtorch backend's options for threads
// intra-op threads.
func libtorchOptions(threads int) libtorch.Options {
	return libtorch.Options{Threads: threads, Shim: os.Getenv(envLibtorchShim)}
}

// pyfallbackOptions are a manager's options for n interpreters. srbench
// keeps the spare P on unless GOSR_PYTHON_SPARE_P=0: its runs drive every
// interpreter from a goroutine at once, where the spare P saved 4-20% of
// the CPU time per call (pyfallback's BenchmarkSpareProc).
func pyfallbackOptions(n int) (pyfallback.Options, error) {
	o := pyfallback.Options{Interpreters: n, LibPython: os.Getenv(envLibPython)}
	var err error
	if o.SharedLibrary, err = envBool(envPythonSharedLib, false); err != nil {
		return o, err
	}
	if o.Handoff, err = envBool(envPythonHandoff, false); err != nil {
		return o, err
	}
	if o.SpareProc, err = envBool(envPythonSpareP, true); err != nil {
		return o, err
	}
	return o, nil
}
