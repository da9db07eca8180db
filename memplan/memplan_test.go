package memplan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlign(t *testing.T) {
	cases := []struct{ n, want int64 }{
		{0, 0},
		{1, 64},
		{63, 64},
		{64, 64},
		{65, 128},
		{127, 128},
		{128, 128},
		{1000, 1024},
		{1 << 40, 1 << 40},
		{1<<40 + 1, 1<<40 + 64},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Align(c.n), "Align(%d)", c.n)
	}
}

func TestNonePlan(t *testing.T) {
	cases := []struct {
		name    string
		reqs    []Request
		offsets []int64
		total   int64
	}{
		{"none", nil, []int64{}, 0},
		{"one", []Request{{Size: 100, Start: 0, End: 3}}, []int64{0}, 128},
		{"aligned sizes", []Request{{Size: 64, Start: 0, End: 1}, {Size: 128, Start: 1, End: 2}, {Size: 64, Start: 2, End: 3}}, []int64{0, 64, 192}, 256},
		{"odd sizes", []Request{{Size: 1, Start: 0, End: 0}, {Size: 65, Start: 0, End: 0}, {Size: 3, Start: 5, End: 9}}, []int64{0, 64, 192}, 256},
		{"zero size", []Request{{Size: 0, Start: 0, End: 1}, {Size: 10, Start: 0, End: 1}, {Size: 0, Start: 2, End: 2}}, []int64{0, 0, 64}, 64},
		{"disjoint lifetimes still separate", []Request{{Size: 64, Start: 0, End: 0}, {Size: 64, Start: 1, End: 1}}, []int64{0, 64}, 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := None{}.Plan(c.reqs)
			assert.Equal(t, c.offsets, p.Offsets)
			assert.Equal(t, c.total, p.Total)
			assert.NoError(t, Check(c.reqs, p))
			for i, off := range p.Offsets {
				assert.Zero(t, off%Alignment, "offset %d", i)
			}
		})
	}
	var pl Planner = None{}
	assert.Equal(t, "none", pl.Name())
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		reqs []Request
		plan Plan
		err  string // "" means valid
	}{
		{"empty", nil, Plan{}, ""},
		{"disjoint in memory", []Request{{Size: 100, Start: 0, End: 5}, {Size: 64, Start: 0, End: 5}},
			Plan{Offsets: []int64{0, 128}, Total: 192}, ""},
		{"disjoint in time share memory", []Request{{Size: 100, Start: 0, End: 2}, {Size: 100, Start: 3, End: 5}},
			Plan{Offsets: []int64{0, 0}, Total: 128}, ""},
		{"touching ranges", []Request{{Size: 64, Start: 0, End: 5}, {Size: 64, Start: 0, End: 5}},
			Plan{Offsets: []int64{0, 64}, Total: 128}, ""},
		{"zero size may overlap", []Request{{Size: 0, Start: 0, End: 5}, {Size: 64, Start: 0, End: 5}},
			Plan{Offsets: []int64{0, 0}, Total: 64}, ""},
		{"exact fit, unaligned end", []Request{{Size: 10, Start: 0, End: 0}},
			Plan{Offsets: []int64{0}, Total: 10}, ""},
		{"in the gap of an aligned neighbour", []Request{{Size: 10, Start: 0, End: 1}, {Size: 64, Start: 0, End: 1}},
			Plan{Offsets: []int64{64, 0}, Total: 74}, ""},

		{"overlap same steps", []Request{{Size: 100, Start: 0, End: 5}, {Size: 100, Start: 0, End: 5}},
			Plan{Offsets: []int64{0, 64}, Total: 192}, "tensors 0 and 1 are alive together"},
		{"overlap at one shared step", []Request{{Size: 64, Start: 0, End: 3}, {Size: 64, Start: 3, End: 6}},
			Plan{Offsets: []int64{0, 0}, Total: 64}, "tensors 0 and 1 are alive together (steps 0-3, 3-6)"},
		{"nested lifetime overlap", []Request{{Size: 64, Start: 0, End: 1}, {Size: 256, Start: 0, End: 9}, {Size: 64, Start: 4, End: 5}},
			Plan{Offsets: []int64{0, 64, 128}, Total: 320}, "tensors 1 and 2"},
		{"contained in memory", []Request{{Size: 256, Start: 0, End: 9}, {Size: 64, Start: 2, End: 3}},
			Plan{Offsets: []int64{0, 128}, Total: 256}, "tensors 0 and 1"},
		{"misaligned", []Request{{Size: 10, Start: 0, End: 1}},
			Plan{Offsets: []int64{32}, Total: 64}, "tensor 0 at offset 32 is not 64-aligned"},
		{"misaligned second", []Request{{Size: 10, Start: 0, End: 1}, {Size: 10, Start: 0, End: 1}},
			Plan{Offsets: []int64{0, 65}, Total: 128}, "tensor 1 at offset 65"},
		{"negative offset", []Request{{Size: 10, Start: 0, End: 1}},
			Plan{Offsets: []int64{-64}, Total: 64}, "outside slab"},
		{"past slab end", []Request{{Size: 100, Start: 0, End: 1}},
			Plan{Offsets: []int64{0}, Total: 64}, "tensor 0 [0, 100) outside slab of 64 bytes"},
		{"starts at slab end", []Request{{Size: 64, Start: 0, End: 1}, {Size: 1, Start: 2, End: 3}},
			Plan{Offsets: []int64{0, 64}, Total: 64}, "tensor 1 [64, 65) outside slab"},
		{"too few offsets", []Request{{Size: 64, Start: 0, End: 1}, {Size: 64, Start: 0, End: 1}},
			Plan{Offsets: []int64{0}, Total: 128}, "1 offsets for 2 requests"},
		{"too many offsets", []Request{{Size: 64, Start: 0, End: 1}},
			Plan{Offsets: []int64{0, 64}, Total: 128}, "2 offsets for 1 requests"},
		{"nil offsets", []Request{{Size: 64, Start: 0, End: 1}},
			Plan{Total: 64}, "0 offsets for 1 requests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.reqs, c.plan)
			if c.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, c.err)
			}
		})
	}
}

func TestLowerBound(t *testing.T) {
	cases := []struct {
		name string
		reqs []Request
		want int64
	}{
		{"none", nil, 0},
		{"one", []Request{{Size: 100, Start: 0, End: 0}}, 128},
		{"zero size", []Request{{Size: 0, Start: 0, End: 4}}, 0},
		{"disjoint lifetimes", []Request{{Size: 100, Start: 0, End: 1}, {Size: 200, Start: 2, End: 3}, {Size: 64, Start: 4, End: 4}}, 256},
		{"adjacent steps do not overlap", []Request{{Size: 64, Start: 0, End: 3}, {Size: 64, Start: 4, End: 7}}, 64},
		{"shared end step overlaps", []Request{{Size: 64, Start: 0, End: 3}, {Size: 64, Start: 3, End: 7}}, 128},
		// 0: [0,9] 128; 1: [1,3] 64; 2: [2,2] 256; 3: [5,8] 512; 4: [6,6] 64
		// step 2: 128+64+256 = 448; step 6: 128+512+64 = 704.
		{"nested lifetimes", []Request{{Size: 128, Start: 0, End: 9}, {Size: 64, Start: 1, End: 3}, {Size: 256, Start: 2, End: 2}, {Size: 512, Start: 5, End: 8}, {Size: 64, Start: 6, End: 6}}, 704},
		{"all together", []Request{{Size: 1, Start: 3, End: 3}, {Size: 63, Start: 3, End: 3}, {Size: 65, Start: 3, End: 3}}, 256},
		{"staircase", []Request{{Size: 64, Start: 0, End: 2}, {Size: 64, Start: 1, End: 3}, {Size: 64, Start: 2, End: 4}, {Size: 64, Start: 3, End: 5}}, 192},
		{"late start", []Request{{Size: 640, Start: 10, End: 10}}, 640},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, LowerBound(c.reqs))
		})
	}
}

// bruteLowerBound is LowerBound computed step by step.
func bruteLowerBound(reqs []Request) int64 {
	var best int64
	for s := 0; ; s++ {
		var live int64
		more := false
		for _, r := range reqs {
			if r.End >= s {
				more = true
			}
			if r.Start <= s && s <= r.End {
				live += Align(r.Size)
			}
		}
		best = max(best, live)
		if !more {
			return best
		}
	}
}

func randomRequests(r *rand.Rand) []Request {
	n := r.IntN(40)
	steps := 1 + r.IntN(60)
	reqs := make([]Request, n)
	for i := range reqs {
		start := r.IntN(steps)
		end := start + r.IntN(steps-start)
		var size int64
		switch r.IntN(4) {
		case 0:
			size = r.Int64N(65) // small, incl. 0 and 64
		case 1:
			size = 64 * r.Int64N(100) // already aligned
		default:
			size = r.Int64N(1 << 20)
		}
		reqs[i] = Request{Size: size, Start: start, End: end}
	}
	return reqs
}

func TestNoneRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		reqs := randomRequests(r)
		p := None{}.Plan(reqs)
		require.NoError(t, Check(reqs, p), "iter %d: %v", iter, reqs)
		lb := LowerBound(reqs)
		require.GreaterOrEqual(t, p.Total, lb, "iter %d", iter)
		require.Equal(t, bruteLowerBound(reqs), lb, "iter %d: %v", iter, reqs)

		var sum int64
		for _, q := range reqs {
			sum += Align(q.Size)
		}
		require.Equal(t, sum, p.Total, "none uses exactly the aligned sizes")
		require.Zero(t, p.Total%Alignment)

		// Check is not vacuous: moving a tensor onto another that is
		// alive with it must be rejected.
		if i, j, ok := liveOverlapPair(reqs); ok {
			bad := Plan{Offsets: append([]int64(nil), p.Offsets...), Total: p.Total}
			bad.Offsets[j] = bad.Offsets[i]
			require.Error(t, Check(reqs, bad), "iter %d", iter)
		}
		// Shrinking the slab by one alignment unit puts the last
		// non-empty tensor outside it.
		if p.Total > 0 {
			require.Error(t, Check(reqs, Plan{Offsets: p.Offsets, Total: p.Total - Alignment}), "iter %d", iter)
		}
	}
}

// liveOverlapPair finds two non-empty requests alive at a common step.
func liveOverlapPair(reqs []Request) (int, int, bool) {
	for i, a := range reqs {
		for j := i + 1; j < len(reqs); j++ {
			b := reqs[j]
			if a.Size > 0 && b.Size > 0 && a.Start <= b.End && b.Start <= a.End {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}
