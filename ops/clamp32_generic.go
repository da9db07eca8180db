//go:build !amd64 || purego

package ops

func clamp32(o, a []float32, lo, hi float32) { clamp32Go(o[:len(a)], a, lo, hi) }
