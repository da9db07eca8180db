package staticruntime_test

import (
	"fmt"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

// sharingPlanner reuses memory between tensors whose lifetimes do not
// overlap (greedy by size), so a lifetime the module gets wrong shows up
// as a wrong result.
type sharingPlanner struct{}

func (sharingPlanner) Name() string { return "sharing" }

func (sharingPlanner) Plan(reqs []memplan.Request) memplan.Plan {
	p := memplan.Plan{Offsets: make([]int64, len(reqs))}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].Size > reqs[order[b]].Size })
	var placed []int
	for _, i := range order {
		r := reqs[i]
		off := int64(0)
		for again := true; again; {
			again = false
			for _, j := range placed {
				q := reqs[j]
				if r.End < q.Start || q.End < r.Start {
					continue
				}
				if off < p.Offsets[j]+memplan.Align(q.Size) && p.Offsets[j] < off+memplan.Align(r.Size) {
					off = p.Offsets[j] + memplan.Align(q.Size)
					again = true
				}
			}
		}
		p.Offsets[i] = off
		p.Total = max(p.Total, off+memplan.Align(r.Size))
		placed = append(placed, i)
	}
	return p
}

func TestSharingPlannerMatchesUnplanned(t *testing.T) {
	tests := []struct {
		name string
		ir   string
		args func() []ivalue.IValue
	}{
		{"chain", mulReluChain(6), func() []ivalue.IValue {
			return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3)), ivalue.FromTensor(ivalue.F32Tensor([]float32{2}, 1))}
		}},
		{"if result of a top-level value", `graph(%x : Tensor, %c : bool):
  %two : float = prim::Constant[value=2.]()
  %a : Tensor = aten::mul(%x, %two)
  %b : Tensor = aten::relu(%x)
  %z : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%b)
  %d : Tensor = aten::mul(%x, %x)
  %e : Tensor = aten::mul(%d, %two)
  %f : Tensor = aten::mul(%e, %two)
  %g : Tensor = aten::mul(%f, %z)
  return (%g)
`, func() []ivalue.IValue {
			return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3)), ivalue.FromBool(true)}
		}},
		{"loop zero trips carries a top-level value", `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %a : Tensor = aten::mul(%x, %two)
  %y : Tensor = prim::Loop(%n, %true, %a)
    block0(%i : int, %acc.1 : Tensor):
      %acc.2 : Tensor = aten::mul(%acc.1, %two)
      -> (%true, %acc.2)
  %d : Tensor = aten::mul(%x, %x)
  %e : Tensor = aten::mul(%d, %two)
  %f : Tensor = aten::mul(%e, %two)
  %g : Tensor = aten::mul(%f, %y)
  return (%g)
`, func() []ivalue.IValue {
			return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3)), ivalue.FromInt(0)}
		}},
		{"view of a managed value used later", `graph(%x : Tensor):
  %two : float = prim::Constant[value=2.]()
  %sh : int[] = prim::Constant[value=[3, 1]]()
  %a : Tensor = aten::mul(%x, %two)
  %v : Tensor = aten::view(%a, %sh)
  %d : Tensor = aten::mul(%x, %x)
  %e : Tensor = aten::mul(%d, %two)
  %f : Tensor = aten::mul(%e, %two)
  %g : Tensor = aten::mul(%f, %v)
  return (%g)
`, func() []ivalue.IValue {
			return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3))}
		}},
		{"value used inside a later if", `graph(%x : Tensor, %c : bool):
  %two : float = prim::Constant[value=2.]()
  %a : Tensor = aten::mul(%x, %two)
  %d : Tensor = aten::mul(%x, %x)
  %e : Tensor = aten::mul(%d, %two)
  %z : Tensor = prim::If(%c)
    block0():
      %z1 : Tensor = aten::mul(%e, %a)
      -> (%z1)
    block1():
      -> (%e)
  %f : Tensor = aten::mul(%z, %two)
  return (%f)
`, func() []ivalue.IValue {
			return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3)), ivalue.FromBool(true)}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := staticruntime.DefaultOptions()
			ref.OptimizeMemory = false
			want, err := prepare(t, tc.ir, &ref).NewRuntime().Run(tc.args()...)
			require.NoError(t, err)
			for _, manageOut := range []bool{false, true} {
				o := staticruntime.DefaultOptions()
				o.Planner = sharingPlanner{}
				o.ManageOutputTensors = manageOut
				o.CheckPlan = true
				r := prepare(t, tc.ir, &o).NewRuntime()
				for rep := 0; rep < 3; rep++ {
					got, err := r.Run(tc.args()...)
					require.NoError(t, err)
					require.Len(t, got, len(want))
					for i := range want {
						assert.Equal(t, f32(t, want[i]), f32(t, got[i]), "rep %d output %d", rep, i)
					}
				}
			}
		})
	}
}

// TestModelsSharingPlanner runs the built-in models with a planner that
// reuses memory between tensors of disjoint lifetimes: every run must
// still match PyTorch.
func TestModelsSharingPlanner(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		for _, manageOut := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/manage_outputs=%v", c.Name, manageOut), func(t *testing.T) {
				g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
				require.NoError(t, err)
				o := staticruntime.DefaultOptions()
				o.Planner = sharingPlanner{}
				o.ManageOutputTensors = manageOut
				o.CheckPlan = true
				m, err := staticruntime.NewStaticModule(g, &o)
				require.NoError(t, err)
				r := m.NewRuntime()
				for rep := 0; rep < 3; rep++ {
					outs, err := r.Run(c.Inputs...)
					require.NoError(t, err)
					compareModel(t, c, outs, fmt.Sprintf("run %d", rep))
				}
				assert.Less(t, r.MemoryStats().ManagedBytes, r.MemoryStats().TensorBytes+1)
			})
		}
	}
}
