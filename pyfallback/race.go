//go:build race

package pyfallback

// Under the race detector calls are handed over: TSan's exit-time
// cleanup (racefini) was seen to crash once after calls ran in libpython
// copies on Go's own threads; not yet understood.
const raceBuild = true
