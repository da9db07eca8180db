package staticruntime

// Splits is the number of products r's kernels split across its
// intra-op team (for the tests of Options.IntraOpThreads).
func Splits(r *StaticRuntime) int64 { return r.scratch.Splits() }

// OpSplits is the number of other ops (elementwise, pooling) r's kernels
// split across its intra-op team so far.
func OpSplits(r *StaticRuntime) int64 { return r.scratch.OpSplits() }

// SplitChoice reports whether r's calibration of its nodes' splits has
// ended and, if so, how many top-level nodes run alone and how many
// there are (see [Split per node]).
func SplitChoice(r *StaticRuntime) (done bool, alone, nodes int) {
	b := r.top
	for _, a := range b.alone {
		if a {
			alone++
		}
	}
	return b.cal == nil && b.aloneOn, alone, len(b.nodes)
}
