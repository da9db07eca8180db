package memplan

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStorageGroupsPlan(t *testing.T) {
	cases := []struct {
		name   string
		reqs   []Request
		groups [][]int
		total  int64
	}{
		{"none", nil, nil, 0},
		{"one", []Request{{Size: 100, Start: 0, End: 3}}, [][]int{{0}}, 128},
		// A chain a -> b -> c: b is written while a is read, c reuses a.
		{"chain", []Request{{Size: 64, Start: 0, End: 1}, {Size: 128, Start: 1, End: 2}, {Size: 256, Start: 2, End: 3}},
			[][]int{{0, 2}, {1}}, 256 + 128},
		// Outputs of a node never share with its inputs (same step).
		{"shared step", []Request{{Size: 64, Start: 0, End: 3}, {Size: 64, Start: 3, End: 6}}, [][]int{{0}, {1}}, 128},
		// The group freed last is reused first (a stack, as in PyTorch).
		{"lifo reuse", []Request{{Size: 64, Start: 0, End: 1}, {Size: 64, Start: 0, End: 2}, {Size: 64, Start: 3, End: 4}},
			[][]int{{0}, {1, 2}}, 128},
		// Groups are sized by their largest tensor, assigned without sizes:
		// a small tensor's group later holds a large one.
		{"sizes ignored", []Request{{Size: 1000, Start: 0, End: 1}, {Size: 64, Start: 0, End: 2}, {Size: 4096, Start: 3, End: 4}, {Size: 64, Start: 3, End: 4}},
			[][]int{{0, 3}, {1, 2}}, 1024 + 4096},
		{"zero size still grouped", []Request{{Size: 0, Start: 0, End: 0}, {Size: 64, Start: 1, End: 1}}, [][]int{{0, 1}}, 64},
		{"unsorted input", []Request{{Size: 64, Start: 4, End: 5}, {Size: 64, Start: 0, End: 1}, {Size: 64, Start: 2, End: 3}},
			[][]int{{1, 2, 0}}, 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := StorageGroups{}.Plan(c.reqs)
			assert.Equal(t, c.groups, p.Groups)
			assert.Equal(t, c.total, p.Total)
			require.NoError(t, Check(c.reqs, p))
		})
	}
}

func TestGreedyBySizePlan(t *testing.T) {
	cases := []struct {
		name    string
		reqs    []Request
		offsets []int64
		total   int64
	}{
		{"none", nil, []int64{}, 0},
		{"one", []Request{{Size: 100, Start: 0, End: 3}}, []int64{0}, 128},
		// Storage groups give 1024+1024; the small tensors fit side by side
		// in the memory of the large one.
		{"straddle", []Request{{Size: 1024, Start: 0, End: 1}, {Size: 512, Start: 2, End: 3}, {Size: 512, Start: 2, End: 3}, {Size: 1024, Start: 4, End: 5}},
			[]int64{0, 0, 512, 0}, 1024},
		// The paper's best fit: the 64-byte tensor takes the small gap, not
		// the large one.
		{"best fit", []Request{{Size: 256, Start: 0, End: 9}, {Size: 128, Start: 0, End: 1}, {Size: 64, Start: 0, End: 9}, {Size: 256, Start: 0, End: 9}, {Size: 128, Start: 2, End: 9}, {Size: 64, Start: 2, End: 9}},
			nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := GreedyBySize{}.Plan(c.reqs)
			require.NoError(t, Check(c.reqs, p))
			assert.Equal(t, LowerBound(c.reqs), p.Total, "these cases reach the lower bound")
			if c.offsets != nil {
				assert.Equal(t, c.offsets, p.Offsets)
				assert.Equal(t, c.total, p.Total)
			}
			assert.Nil(t, p.Groups)
		})
	}
}

// TestGreedyBeatsStorageGroupsOnPyramid is a case the grouping cannot do
// well: every tensor lives one step and sizes alternate, so groups pair
// unlike sizes while offsets pack them.
func TestGreedyBeatsStorageGroupsOnPyramid(t *testing.T) {
	var reqs []Request
	for s := 0; s < 20; s++ {
		size := int64(64)
		if s%2 == 1 {
			size = 64 * 100
		}
		reqs = append(reqs, Request{Size: size, Start: s, End: s + 1}, Request{Size: 64 * 50, Start: s, End: s})
	}
	sg := StorageGroups{}.Plan(reqs)
	gr := GreedyBySize{}.Plan(reqs)
	require.NoError(t, Check(reqs, sg))
	require.NoError(t, Check(reqs, gr))
	assert.Less(t, gr.Total, sg.Total)
	assert.Equal(t, LowerBound(reqs), gr.Total)
}

func TestByName(t *testing.T) {
	for _, name := range []string{"none", "storage-groups", "greedy"} {
		p, err := ByName(name)
		require.NoError(t, err)
		assert.Equal(t, name, p.Name())
	}
	_, err := ByName("best")
	assert.ErrorContains(t, err, `unknown planner "best" (have none, storage-groups, greedy)`)
}

// networkRequests makes lifetimes shaped like a network's: a chain of
// layers, each reading the previous one's output, with skip connections
// that stay alive for a few steps, and branches.
func networkRequests(r *rand.Rand) []Request {
	steps := 5 + r.IntN(120)
	var reqs []Request
	size := int64(1+r.IntN(64)) * 4096
	for s := 0; s < steps; s++ {
		if r.IntN(6) == 0 { // downsampling: smaller, or wider
			size = max(64, size/int64(1+r.IntN(4)))
		} else if r.IntN(8) == 0 {
			size *= int64(1 + r.IntN(3))
		}
		life := 1
		switch r.IntN(10) {
		case 0:
			life = 2 + r.IntN(8) // a skip connection
		case 1:
			life = 0 // dead after its node (an unused output)
		}
		reqs = append(reqs, Request{Size: size + int64(r.IntN(3))*4, Start: s, End: min(s+life, steps)})
		if r.IntN(5) == 0 { // a small side tensor (a shape, a mask)
			reqs = append(reqs, Request{Size: int64(r.IntN(512)), Start: s, End: s + r.IntN(3)})
		}
	}
	return reqs
}

// networkOverwriteRequests is networkRequests with planned overwrites: a
// layer's output written over the previous layer's where that one dies
// at this layer (an activation, a pooling, an elementwise op).
func networkOverwriteRequests(r *rand.Rand) []Request {
	reqs := networkRequests(r)
	last := -1 // the previous layer's tensor
	for i := range reqs {
		if last >= 0 && reqs[last].End == reqs[i].Start && reqs[last].Start < reqs[i].Start && r.IntN(3) > 0 {
			reqs[i].Overwrites = OverwriteOf(last)
		}
		if reqs[i].Size >= 64 && (last < 0 || reqs[i].Start > reqs[last].Start) {
			last = i
		}
	}
	return reqs
}

// TestPlannersRandom checks both planners on thousands of seeded random
// lifetime sets: always valid, never below the lower bound, and greedy
// never worse than storage groups.
func TestPlannersRandom(t *testing.T) {
	gens := []struct {
		name string
		gen  func(*rand.Rand) []Request
	}{
		{"uniform", randomRequests},
		{"network", networkRequests},
		{"network overwrites", networkOverwriteRequests},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(g.name))))
			const n = 3000
			var below, equal int
			var sumGreedyLB, sumSGLB float64
			var withLB int
			worst := 1.0
			for iter := 0; iter < n; iter++ {
				reqs := g.gen(r)
				lb := LowerBound(reqs)
				sg := StorageGroups{}.Plan(reqs)
				gr := GreedyBySize{}.Plan(reqs)
				require.NoError(t, Check(reqs, sg), "iter %d storage groups: %v", iter, reqs)
				require.NoError(t, Check(reqs, gr), "iter %d greedy: %v", iter, reqs)
				require.GreaterOrEqual(t, sg.Total, lb, "iter %d", iter)
				require.GreaterOrEqual(t, gr.Total, lb, "iter %d", iter)
				require.LessOrEqual(t, gr.Total, sg.Total, "iter %d", iter)
				require.LessOrEqual(t, sg.Total, TensorBytes(reqs), "iter %d", iter)
				grouped := 0
				for _, grp := range sg.Groups {
					grouped += len(grp)
				}
				require.Equal(t, len(reqs), grouped, "iter %d: every request in one group", iter)
				switch {
				case gr.Total < sg.Total:
					below++
				case gr.Total == sg.Total:
					equal++
				}
				if lb > 0 {
					withLB++
					sumGreedyLB += float64(gr.Total) / float64(lb)
					sumSGLB += float64(sg.Total) / float64(lb)
					worst = max(worst, float64(gr.Total)/float64(lb))
				}
			}
			t.Logf("%d cases: greedy below storage groups in %d, equal in %d; mean slab/lower bound: greedy %.3f, storage groups %.3f; greedy worst %.3f",
				n, below, equal, sumGreedyLB/float64(withLB), sumSGLB/float64(withLB), worst)
			// Greedy must usually be strictly better where there is room.
			assert.Greater(t, below, (n-equal)/2, "greedy should usually beat storage groups")
		})
	}
}

// TestGreedyRawVersusStorageGroups measures the paper's heuristic alone,
// before Plan keeps the best of its variants: on network-shaped lifetimes
// it is rarely above storage groups by more than a few percent. (It can
// be, on small sets where one bad early choice costs a whole tensor,
// which is why Plan does not use it alone.)
func TestGreedyRawVersusStorageGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	var pl placer
	worst := 0.0
	const n = 3000
	above := 0
	for iter := 0; iter < n; iter++ {
		reqs := networkRequests(r)
		order := make([]int, len(reqs))
		for i := range order {
			order[i] = i
		}
		// size order, as GreedyBySize's first variant
		sortBySize(reqs, order)
		p := pl.place(reqs, order, true)
		require.NoError(t, Check(reqs, p))
		sg := StorageGroups{}.Plan(reqs)
		if sg.Total > 0 {
			worst = max(worst, float64(p.Total)/float64(sg.Total))
			if float64(p.Total) > 1.05*float64(sg.Total) {
				above++
			}
		}
	}
	t.Logf("raw greedy-by-size: above storage groups by more than 5%% in %d of %d cases, worst ratio %.3f", above, n, worst)
	assert.Less(t, above, n/10)
}

func sortBySize(reqs []Request, order []int) {
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && Align(reqs[order[j]].Size) > Align(reqs[order[j-1]].Size); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// TestPlanCost: planning a network of a few hundred tensors is well under
// a millisecond (resnet18 has 60, a transformer a few hundred).
func TestPlanCost(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var reqs []Request
	for len(reqs) < 500 {
		reqs = append(reqs, networkRequests(r)...)
	}
	reqs = reqs[:500]
	for _, p := range Planners {
		// The best of three, so that a collection or a preemption on a
		// busy machine is not the figure.
		var pl Plan
		d := time.Duration(1<<63 - 1)
		for range 3 {
			t0 := time.Now()
			pl = p.Plan(reqs)
			d = min(d, time.Since(t0))
		}
		require.NoError(t, Check(reqs, pl))
		t.Logf("%s: 500 tensors planned in %v, slab %d, lower bound %d", p.Name(), d, pl.Total, LowerBound(reqs))
		if !testing.Short() && !raceEnabled {
			assert.Less(t, d, 20*time.Millisecond, fmt.Sprintf("%s planning", p.Name()))
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var reqs []Request
	for len(reqs) < 60 {
		reqs = append(reqs, networkRequests(r)...)
	}
	reqs = reqs[:60]
	for _, p := range Planners {
		b.Run(p.Name(), func(b *testing.B) {
			for b.Loop() {
				p.Plan(reqs)
			}
		})
	}
}

// TestOverwrites: a tensor written over the input that dies where it is
// written (a planned overwrite) shares that input's offset, so the pair
// costs the larger of the two; links whose steps do not meet, and
// Overwrites that name no request, are ignored.
func TestOverwrites(t *testing.T) {
	tests := []struct {
		name string
		reqs []Request
		lb   int64
		// want is greedy's slab; same lists the pairs placed at one offset.
		want int64
		same [][2]int
	}{
		{"pool over its input (conv -> pool -> conv)",
			[]Request{{Size: 4096, Start: 0, End: 1}, {Size: 1024, Start: 1, End: 2, Overwrites: OverwriteOf(0)}, {Size: 2048, Start: 2, End: 3}},
			4096, 4096, [][2]int{{0, 1}}},
		{"output larger than its input (a 1x1 expansion)",
			[]Request{{Size: 1024, Start: 0, End: 1}, {Size: 4096, Start: 1, End: 2, Overwrites: OverwriteOf(0)}, {Size: 1024, Start: 2, End: 3, Overwrites: OverwriteOf(1)}},
			4096, 4096, [][2]int{{0, 1}, {1, 2}}},
		{"a skip connection alive across the chain",
			[]Request{{Size: 1024, Start: 0, End: 3}, {Size: 2048, Start: 1, End: 2}, {Size: 2048, Start: 2, End: 3, Overwrites: OverwriteOf(1)}, {Size: 1024, Start: 4, End: 5}},
			3072, 3072, [][2]int{{1, 2}}},
		{"steps that do not meet: no link",
			[]Request{{Size: 1024, Start: 0, End: 2}, {Size: 1024, Start: 1, End: 3, Overwrites: OverwriteOf(0)}},
			2048, 2048, nil},
		{"the zero Overwrite names none (not request 0)",
			[]Request{{Size: 1024, Start: 0, End: 1}, {Size: 1024, Start: 1, End: 2, Overwrites: Overwrite{}}},
			2048, 2048, nil},
		{"an index outside the list is ignored",
			[]Request{{Size: 1024, Start: 0, End: 1}, {Size: 1024, Start: 1, End: 2, Overwrites: OverwriteOf(2)}, {Size: 1024, Start: 2, End: 3, Overwrites: OverwriteOf(-1)}},
			2048, 2048, nil},
		{"a second writer over one input is ignored",
			[]Request{{Size: 1024, Start: 0, End: 1}, {Size: 1024, Start: 1, End: 2, Overwrites: OverwriteOf(0)}, {Size: 1024, Start: 1, End: 2, Overwrites: OverwriteOf(0)}},
			2048, 2048, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.lb, LowerBound(tc.reqs))
			p := GreedyBySize{}.Plan(tc.reqs)
			require.NoError(t, Check(tc.reqs, p))
			assert.Equal(t, tc.want, p.Total)
			for _, pr := range tc.same {
				assert.Equal(t, p.Offsets[pr[0]], p.Offsets[pr[1]], "pair %v", pr)
			}
			// The other planners ignore links and stay valid.
			for _, pl := range []Planner{None{}, StorageGroups{}} {
				require.NoError(t, Check(tc.reqs, pl.Plan(tc.reqs)), pl.Name())
			}
		})
	}
	// Check accepts a linked pair only at one offset, not overlapping
	// otherwise, and never an unlinked pair.
	reqs := []Request{{Size: 128, Start: 0, End: 1}, {Size: 128, Start: 1, End: 2, Overwrites: OverwriteOf(0)}}
	assert.NoError(t, Check(reqs, Plan{Offsets: []int64{0, 0}, Total: 128}))
	assert.NoError(t, Check(reqs, Plan{Offsets: []int64{0, 128}, Total: 256}))
	assert.ErrorContains(t, Check(reqs, Plan{Offsets: []int64{64, 0}, Total: 192}), "overlap in memory")
	reqs[1].Overwrites = Overwrite{}
	assert.ErrorContains(t, Check(reqs, Plan{Offsets: []int64{0, 0}, Total: 128}), "overlap in memory")
}
