package staticruntime

// Splits is the number of products r's kernels split across its
// intra-op team (for the tests of Options.IntraOpThreads).
func Splits(r *StaticRuntime) int64 { return r.scratch.Splits() }

// OpSplits is the number of other ops (elementwise, pooling) r's kernels
// split across its intra-op team so far.
func OpSplits(r *StaticRuntime) int64 { return r.scratch.OpSplits() }
