// Package stats holds the summary statistics gosr's benchmarks and
// srbench report: one definition of the median for all of them.
package stats

import "slices"

// Median is the middle value of xs, or the mean of the two middle values
// when len(xs) is even; 0 for no values. xs is not reordered. NaNs sort
// first (slices.Sort's order), so a few of them shift the median down
// rather than poisoning it.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianRatio is the median of num[k]/den[k] over k: the paired ratio
// of two series timed in alternating rounds, each ratio within one
// round. num and den have the same length; 0 for none.
func MedianRatio(num, den []float64) float64 {
	rs := make([]float64, len(num))
	for k := range num {
		rs[k] = num[k] / den[k]
	}
	return Median(rs)
}
