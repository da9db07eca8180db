//go:build amd64 && !purego

package gemm

//go:noescape
func clamp32AVX2(o, a *float32, n int, lo, hi float32)

// Clamp32 sets o[i] = min(max(a[i], lo), hi), NaN passing through (as
// PyTorch's clamp, relu and hardtanh); o may be a (in place). Vectorised:
// Go's float min and max handle NaN and signed zeros with branches,
// several times slower on activations.
func Clamp32(o, a []float32, lo, hi float32) {
	n := len(a)
	o = o[:n]
	n8 := n &^ 7
	if useAsm && n8 > 0 {
		clamp32AVX2(&o[0], &a[0], n8, lo, hi)
	} else {
		n8 = 0
	}
	clamp32Go(o[n8:], a[n8:], lo, hi)
}

//go:noescape
func addClamp32AVX2(o, a, b *float32, n int, lo, hi float32)

// AddClamp32 sets o[i] = min(max(a[i]+b[i], lo), hi), NaN passing
// through: Clamp32 of the sum, in one pass over memory (a residual
// added and clamped while the output is in cache). o may be a or b.
func AddClamp32(o, a, b []float32, lo, hi float32) {
	n := len(a)
	o, b = o[:n], b[:n]
	n8 := n &^ 7
	if useAsm && n8 > 0 {
		addClamp32AVX2(&o[0], &a[0], &b[0], n8, lo, hi)
	} else {
		n8 = 0
	}
	addClamp32Go(o[n8:], a[n8:], b[n8:], lo, hi)
}
