//go:build !amd64 || purego

package gemm

// Clamp32 sets o[i] = min(max(a[i], lo), hi), NaN passing through; o may
// be a.
func Clamp32(o, a []float32, lo, hi float32) { clamp32Go(o[:len(a)], a, lo, hi) }

// AddClamp32 sets o[i] = min(max(a[i]+b[i], lo), hi), NaN passing
// through; o may be a or b.
func AddClamp32(o, a, b []float32, lo, hi float32) {
	addClamp32Go(o[:len(a)], a, b[:len(a)], lo, hi)
}
