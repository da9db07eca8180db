package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{5, 1, 4, 2, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"repeated values", []float64{2, 2, 9, 2}, 2},
		{"negative and fractional", []float64{-1.5, 0.25, -3, 10}, -0.625},
		{"a NaN sorts first", []float64{3, math.NaN(), 1, 2, 4}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Median(tc.xs))
		})
	}
}

func TestMedianLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	Median(xs)
	assert.Equal(t, []float64{3, 1, 2}, xs)
}

func TestMedianRatio(t *testing.T) {
	assert.Equal(t, 0.0, MedianRatio(nil, nil))
	// Round by round 2, 0.5, 3: the median ratio, not the ratio of medians.
	assert.Equal(t, 2.0, MedianRatio([]float64{4, 1, 9}, []float64{2, 2, 3}))
	assert.Equal(t, 1.0, MedianRatio([]float64{1, 3}, []float64{2, 2}), "even: the mean of 0.5 and 1.5")
}
