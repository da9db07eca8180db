package alias

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
)

// indexGraphs are graphs whose points-to sets are small (chains, views,
// lists) or grow along the graph (a chain of loops: set sizes 1..n).
func indexGraphs(t *testing.T) map[string]*graph.Graph {
	gs := map[string]*graph.Graph{}
	for name, ir := range map[string]string{
		"chain": gen.ReluChainIR(30), "views": gen.ViewChainIR(30), "list": gen.ListIR(20),
		"ifs": gen.IfChainIR(20), "loops": gen.LoopChainIR(25), "wide": gen.WideIR(20),
		"containers": `graph(%x : Tensor, %l : Tensor[]):
  %zero : int = prim::Constant[value=0]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::t(%a)
  %m : Tensor[] = prim::ListConstruct(%a, %x)
  %e : Tensor = aten::__getitem__(%m, %zero)
  %n : Tensor[] = aten::append(%l, %e)
  %c : Tensor = aten::add_(%b, %e, %zero)
  %t : (Tensor, Tensor[]) = prim::TupleConstruct(%c, %m)
  return (%t)
`,
	} {
		g, err := graph.Parse(ir, nil)
		require.NoError(t, err, name)
		gs[name] = g
	}
	return gs
}

// TestIndexAgainstMayAlias checks both ways the index answers (a list
// per location, or summaries per treap node) against MayAlias asked of
// every value.
func TestIndexAgainstMayAlias(t *testing.T) {
	for name, g := range indexGraphs(t) {
		for _, big := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/big=%v", name, big), func(t *testing.T) {
				if big {
					old := smallIndexMax
					smallIndexMax = -1 << 30
					t.Cleanup(func() { smallIndexMax = old })
				}
				d := Analyze(g)
				x := d.newIndex(d.values, true)
				assert.Equal(t, big, x.first2 != nil)
				late := &graph.Value{Type: graph.Tensor} // made after the analysis
				for _, v := range append(slices.Clone(d.values), late) {
					var want []*graph.Value
					best := -1
					for i, u := range d.values {
						if d.MayAlias(u, v) {
							want = append(want, u)
							best = i
						}
					}
					require.Equal(t, want, x.Aliases(v, -1), "Aliases(%s)", v)
					for _, k := range []int{1, 2, 3} {
						got := x.Aliases(v, k)
						require.Len(t, got, min(k, len(want)), "Aliases(%s, %d)", v, k)
						for _, u := range got {
							require.Contains(t, want, u, "Aliases(%s, %d)", v, k)
						}
					}
					pos := x.MaxOver(func(u *graph.Value) int { return int(x.posOf(u)) }, -1)
					require.Equal(t, best, pos(v), "MaxOver(%s)", v)
					// An index of some values: a list per location, or
					// (few values) asking each.
					for _, some := range [][]*graph.Value{d.values[:min(5, len(d.values))], d.values[len(d.values)/3:]} {
						y := d.NewIndex(some)
						var want []*graph.Value
						for _, u := range some {
							if d.MayAlias(u, v) {
								want = append(want, u)
							}
						}
						require.Equal(t, want, y.Aliases(v, -1), "NewIndex(%d values).Aliases(%s)", len(some), v)
						if len(want) > 0 {
							require.Len(t, y.Aliases(v, 1), 1)
						}
					}
				}
			})
		}
	}
}

// TestReachAgainstReachableFrom grows a set of values in random order
// and checks that each OnReach callback has fired exactly when
// ReachableFrom(a, set) became true.
func TestReachAgainstReachableFrom(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for name, g := range indexGraphs(t) {
		t.Run(name, func(t *testing.T) {
			d := Analyze(g)
			r := d.NewReach()
			fired := map[*graph.Value]bool{}
			for _, a := range d.values {
				r.OnReach(a, func() {
					assert.False(t, fired[a], "fired twice for %s", a)
					fired[a] = true
				})
			}
			var added []*graph.Value
			for _, i := range rng.Perm(len(d.values)) {
				added = append(added, d.values[i])
				r.Add(d.values[i])
				for _, a := range d.values {
					require.Equal(t, d.ReachableFrom(a, added), fired[a], "%s after adding %d values", a, len(added))
				}
			}
		})
	}
}

// TestFirst2: positions are kept from 0 up (position 0 is a value, not
// "none"), -1 is none, duplicates count once, and the two smallest win.
func TestFirst2(t *testing.T) {
	none := [2]int32{-1, -1}
	tests := []struct {
		name string
		a, b [2]int32
		want [2]int32
	}{
		{"nothing", none, none, none},
		{"position 0 alone", [2]int32{0, -1}, none, [2]int32{0, -1}},
		{"position 0 from the second list", none, [2]int32{0, -1}, [2]int32{0, -1}},
		{"a duplicate counts once", [2]int32{2, -1}, [2]int32{2, -1}, [2]int32{2, -1}},
		{"the two smallest of four", [2]int32{3, 5}, [2]int32{0, 4}, [2]int32{0, 3}},
		{"ordered whatever the input order", [2]int32{7, -1}, [2]int32{1, -1}, [2]int32{1, 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, first2(tc.a, tc.b))
			assert.Equal(t, tc.want, first2(tc.b, tc.a), "merge is commutative")
		})
	}
}
