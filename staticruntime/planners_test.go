package staticruntime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

func prepareCase(t testing.TB, c *fixture.Case, o staticruntime.Options) *staticruntime.StaticModule {
	t.Helper()
	g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
	require.NoError(t, err, "parse %s/model.ir", c.Name)
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	return m
}

// TestPlannersOnModels runs every built-in model with every planner, with
// and without managed outputs: outputs match PyTorch on every run, the
// plan is checked after every node (CheckPlan), the slab is never below
// the lower bound, greedy is within 5% of it, and a steady run allocates
// nothing.
func TestPlannersOnModels(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		for _, pl := range memplan.Planners {
			for _, manageOut := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/manage_outputs=%v", c.Name, pl.Name(), manageOut)
				t.Run(name, func(t *testing.T) {
					o := staticruntime.DefaultOptions()
					o.Planner, o.ManageOutputTensors, o.CheckPlan = pl, manageOut, true
					r := prepareCase(t, c, o).NewRuntime()
					for i := 0; i < 3; i++ {
						outs, err := r.Run(c.Inputs...)
						require.NoError(t, err)
						compareModel(t, c, outs, fmt.Sprintf("run %d", i))
						r.ReleaseOutputs()
					}
					st := r.MemoryStats()
					assert.Equal(t, pl.Name(), st.Planner)
					assert.GreaterOrEqual(t, st.ManagedBytes, st.LowerBound)
					assert.Equal(t, st.TensorBytes-st.ManagedBytes, st.ReusedBytes)
					assert.Zero(t, st.AbandonedArenas)
					if pl.Name() == "greedy" {
						assert.LessOrEqual(t, float64(st.ManagedBytes), 1.05*float64(st.LowerBound), "greedy within 5%% of the lower bound")
					}
					if manageOut {
						assert.Positive(t, st.OutputTensors+len(c.Inputs), "outputs are managed")
					}
					if raceflag.Enabled || testing.Short() {
						return
					}
					o.CheckPlan = false
					r = prepareCase(t, c, o).NewRuntime()
					for i := 0; i < 2; i++ {
						_, err := r.Run(c.Inputs...)
						require.NoError(t, err)
						r.ReleaseOutputs()
					}
					var runErr error
					allocs := testing.AllocsPerRun(10, func() {
						if _, err := r.Run(c.Inputs...); err != nil {
							runErr = err
						}
						r.ReleaseOutputs()
					})
					require.NoError(t, runErr)
					assert.Zero(t, allocs, "allocations per steady Run")
				})
			}
		}
	}
}

// TestGreedyNeverAboveStorageGroupsOnModels compares the two planners'
// slabs on the built-in models.
func TestGreedyNeverAboveStorageGroupsOnModels(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		bytes := map[string]int64{}
		for _, pl := range memplan.Planners {
			o := staticruntime.DefaultOptions()
			o.Planner = pl
			r := prepareCase(t, c, o).NewRuntime()
			_, err := r.Run(c.Inputs...)
			require.NoError(t, err)
			_, err = r.Run(c.Inputs...) // plans
			require.NoError(t, err)
			bytes[pl.Name()] = r.MemoryStats().ManagedBytes
		}
		t.Logf("%-18s none %9d  storage-groups %9d  greedy %9d", c.Name, bytes["none"], bytes["storage-groups"], bytes["greedy"])
		assert.LessOrEqual(t, bytes["greedy"], bytes["storage-groups"], c.Name)
		assert.LessOrEqual(t, bytes["storage-groups"], bytes["none"], c.Name)
	}
}

// spans returns the byte ranges of the memory every tensor in vs uses.
func spans(vs []ivalue.IValue) [][2]uintptr {
	var out [][2]uintptr
	for _, t := range fixture.Flatten(vs) {
		if t.Storage() == nil || len(t.Storage().Data) == 0 {
			continue
		}
		d := t.Storage().Data
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
		out = append(out, [2]uintptr{lo, lo + uintptr(len(d))})
	}
	return out
}

func disjoint(a, b [][2]uintptr) bool {
	for _, x := range a {
		for _, y := range b {
			if x[0] < y[1] && y[0] < x[1] {
				return false
			}
		}
	}
	return true
}

// keptOutputsIR returns a view of a managed tensor, a tuple holding a
// fresh tensor, and a list built in a loop: every kind of output object.
const keptOutputsIR = `graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[-1]]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::mul(%a, %x)
  %v : Tensor = aten::view(%b, %s)
  %c : Tensor = aten::sigmoid(%x)
  %tup : (Tensor, Tensor) = prim::TupleConstruct(%c, %b)
  %l0 : Tensor[] = prim::ListConstruct()
  %l : Tensor[] = prim::Loop(%n, %t, %l0)
    block0(%i : int, %acc : Tensor[]):
      %m : Tensor = aten::add(%x, %i, %one)
      %acc2 : Tensor[] = aten::append(%acc, %m)
      -> (%t, %acc)
  return (%v, %tup, %l)
`

// TestManagedOutputsKeptPastNextRun is the contract of ReleaseOutputs: a
// caller that keeps outputs across runs sees them unchanged and sharing no
// memory with the new outputs; one that releases them gets their memory
// back without allocating.
func TestManagedOutputsKeptPastNextRun(t *testing.T) {
	for _, pl := range memplan.Planners {
		t.Run(pl.Name(), func(t *testing.T) {
			o := staticruntime.DefaultOptions()
			o.Planner, o.ManageOutputTensors, o.CheckPlan = pl, true, true
			m := prepare(t, keptOutputsIR, &o)
			r := m.NewRuntime()
			inputs := func(k int) []ivalue.IValue {
				x := make([]float32, 6)
				for i := range x {
					x[i] = float32(i*k) - 5
				}
				return []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor(x, 2, 3)), ivalue.FromInt(3)}
			}
			// References from separate runtimes, cloned.
			want := func(k int) []ivalue.IValue {
				ref := m.NewRuntime()
				outs, err := ref.Run(inputs(k)...)
				require.NoError(t, err)
				c := make([]ivalue.IValue, len(outs))
				for i := range outs {
					c[i] = outs[i].Clone()
				}
				return c
			}
			var kept [][]ivalue.IValue
			for k := 1; k <= 4; k++ {
				outs, err := r.Run(inputs(k)...)
				require.NoError(t, err)
				held := append([]ivalue.IValue(nil), outs...)
				for j, prev := range kept {
					assert.True(t, disjoint(spans(prev), spans(held)), "run %d's outputs share memory with run %d's", k, j+1)
				}
				kept = append(kept, held)
			}
			assert.Equal(t, 3, r.MemoryStats().AbandonedArenas)
			for j, outs := range kept {
				assert.Zero(t, fixture.MaxAbsDiff(fixture.Flatten(outs), fixture.Flatten(want(j+1))), "kept outputs of run %d changed", j+1)
			}

			// Released: the memory comes back.
			r.ReleaseOutputs()
			first, err := r.Run(inputs(1)...)
			require.NoError(t, err)
			firstSpans := spans(first)
			r.ReleaseOutputs()
			second, err := r.Run(inputs(2)...)
			require.NoError(t, err)
			assert.Zero(t, fixture.MaxAbsDiff(fixture.Flatten(second), fixture.Flatten(want(2))))
			assert.False(t, disjoint(firstSpans, spans(second)), "released outputs' memory is reused")
			assert.Equal(t, 3, r.MemoryStats().AbandonedArenas)
		})
	}
}

// TestDynamicShapes runs shapes that go up and down: outputs are those of
// a fresh runtime at each shape, a new largest shape re-plans once, and
// runs at that shape or below allocate nothing.
func TestDynamicShapes(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	var c *fixture.Case
	for _, cc := range cases {
		if cc.Name == "mlp" {
			c = cc
		}
	}
	require.NotNil(t, c)
	in := c.Inputs[0].Tensor()
	require.Equal(t, 2, in.Dim())
	batch := func(n int) ivalue.IValue {
		x := make([]float32, n*in.Size(1))
		for i := range x {
			x[i] = float32(i%7)*0.25 - 0.5
		}
		return ivalue.FromTensor(ivalue.F32Tensor(x, n, in.Size(1)))
	}
	for _, pl := range memplan.Planners {
		t.Run(pl.Name(), func(t *testing.T) {
			o := staticruntime.DefaultOptions()
			o.Planner, o.CheckPlan = pl, true
			m := prepareCase(t, c, o)
			r := m.NewRuntime()
			// A run at a new largest shape takes its own memory; the run
			// after it re-plans, once. Smaller shapes never re-plan.
			maxSeen, growths := 0, 0
			for _, n := range []int{1, 4, 2, 8, 3, 8, 1, 16, 5} {
				outs, err := r.Run(batch(n))
				require.NoError(t, err)
				ref := m.NewRuntime()
				want, err := ref.Run(batch(n))
				require.NoError(t, err)
				assert.Zero(t, fixture.MaxAbsDiff(fixture.Flatten(outs), fixture.Flatten(want)), "batch %d", n)
				assert.Equal(t, growths, r.MemoryStats().Replans, "batch %d (largest before: %d)", n, maxSeen)
				if n > maxSeen {
					maxSeen = n
					growths++
				}
			}
			if raceflag.Enabled {
				return
			}
			o.CheckPlan = false
			r = prepareCase(t, c, o).NewRuntime()
			big := batch(16)
			for i := 0; i < 2; i++ {
				_, err := r.Run(big)
				require.NoError(t, err)
			}
			for _, n := range []int{16, 3, 9, 1} {
				x := batch(n)
				assert.Zero(t, testing.AllocsPerRun(5, func() { r.Run(x) }), "batch %d after batch 16", n)
			}
		})
	}
}

func TestDisablePassesUnknown(t *testing.T) {
	g, err := graph.Parse(mulReluChain(1), nil)
	require.NoError(t, err)
	_, err = staticruntime.NewStaticModule(g, &staticruntime.Options{DisablePasses: []string{"NoSuchPass"}})
	assert.ErrorContains(t, err, `no pass named "NoSuchPass"`)
}

// BenchmarkPlannerSpeed times every built-in model with no planning
// (each tensor keeps its own buffer, OptimizeMemory off) and with each
// planner, one sub-benchmark per model (dlrm_like also at batch 256 and
// 2048). Each iteration is a round: every configuration times a batch of
// runs (about 2 ms), in turn, starting from the next configuration each
// round, so that the machine's drift hits all alike. Reported per
// configuration: the median us per run, the unplanned median over its
// own (x), and the rounds it beat the unplanned run (wins; rounds are
// paired, so this sign test tells a small steady gain from the noise; a
// gain of 1% needs several hundred rounds). For example:
//
//	go test -run '^$' -bench PlannerSpeed -benchtime 101x ./staticruntime/
//	go test -run '^$' -bench 'PlannerSpeed/dlrm_like' -benchtime 601x ./staticruntime/
func BenchmarkPlannerSpeed(b *testing.B) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(b, err)
	type config struct {
		name string
		o    staticruntime.Options
	}
	configs := []config{{"unplanned", staticruntime.Options{EnableOutVariant: true}}}
	for _, pl := range memplan.Planners {
		o := staticruntime.DefaultOptions()
		o.Planner = pl
		configs = append(configs, config{pl.Name(), o})
	}
	o := staticruntime.DefaultOptions()
	o.DisableOverwrites = true
	configs = append(configs, config{"greedy-no-overwrites", o})
	// The DLRM-style model at serving batch sizes too: its tensors then
	// outgrow the L1 cache (b256) and the L2 (b2048), where a compact slab
	// pays.
	for _, c := range cases {
		if c.Name == "dlrm_like" {
			for _, k := range []int{64, 512} {
				big := *c
				big.Name = fmt.Sprintf("dlrm_like_b%d", 4*k)
				big.Inputs = tileDLRM(c.Inputs, k)
				cases = append(cases, &big)
			}
			break
		}
	}
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			rs := make([]*staticruntime.StaticRuntime, len(configs))
			for i, cf := range configs {
				rs[i] = prepareCase(b, c, cf.o).NewRuntime()
				for k := 0; k < 3; k++ {
					_, err := rs[i].Run(c.Inputs...)
					require.NoError(b, err)
				}
			}
			// Batches of runs long enough to time (about 2 ms each).
			t0 := time.Now()
			rs[0].Run(c.Inputs...)
			per := max(1, int(2*time.Millisecond/max(time.Since(t0), time.Microsecond)))
			samples := make([][]float64, len(configs))
			b.ResetTimer()
			for rep := range b.N {
				// Each round starts at the next configuration: whichever
				// runs first in a round runs after a different one than
				// the rest, and that position must not fall on one
				// configuration always.
				for r := range configs {
					i := (rep + r) % len(configs)
					t0 := time.Now()
					for k := 0; k < per; k++ {
						rs[i].Run(c.Inputs...)
					}
					samples[i] = append(samples[i], float64(time.Since(t0).Nanoseconds())/float64(per)/1e3)
				}
			}
			b.StopTimer()
			b.ReportMetric(0, "ns/op")
			base := stats.Median(samples[0])
			b.ReportMetric(base, "unplanned-us")
			for i, cf := range configs[1:] {
				m := stats.Median(samples[i+1])
				wins := 0
				for k := range samples[i+1] {
					if samples[i+1][k] < samples[0][k] {
						wins++
					}
				}
				b.ReportMetric(m, cf.name+"-us")
				b.ReportMetric(base/m, cf.name+"-x")
				b.ReportMetric(float64(wins), cf.name+"-wins")
			}
		})
	}
}

// tileDLRM repeats a DLRM-style batch (dense, then index/offset pairs
// of EmbeddingBags) k times.
func tileDLRM(in []ivalue.IValue, k int) []ivalue.IValue {
	dense := in[0].Tensor()
	d := dense.F32Contig()
	var nd []float32
	for j := 0; j < k; j++ {
		nd = append(nd, d...)
	}
	out := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor(nd, dense.Size(0)*k, dense.Size(1)))}
	for p := 1; p+1 < len(in); p += 2 {
		idx := in[p].Tensor().I64Contig()
		off := in[p+1].Tensor().I64Contig()
		var ni, no []int64
		for j := 0; j < k; j++ {
			ni = append(ni, idx...)
			for _, o := range off {
				no = append(no, o+int64(j*len(idx)))
			}
		}
		out = append(out, ivalue.FromTensor(ivalue.I64Tensor(ni, len(ni))), ivalue.FromTensor(ivalue.I64Tensor(no, len(no))))
	}
	return out
}

// TestShapesFromManyGoroutines drives one module from 8 goroutines
// through a pool, each changing the batch size from run to run, with the
// plan checked after every node: every output equals the one a fresh
// single-threaded runtime gives, bit for bit, for every planner and with
// managed outputs kept or released.
func TestShapesFromManyGoroutines(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	var c *fixture.Case
	for _, cc := range cases {
		if cc.Name == "mlp" {
			c = cc
		}
	}
	require.NotNil(t, c)
	width := c.Inputs[0].Tensor().Size(1)
	batch := func(n int) ivalue.IValue {
		x := make([]float32, n*width)
		for i := range x {
			x[i] = float32((i*7+n)%11)*0.2 - 1
		}
		return ivalue.FromTensor(ivalue.F32Tensor(x, n, width))
	}
	sizes := []int{1, 3, 8, 2, 16, 5, 1, 12}
	for _, pl := range memplan.Planners {
		for _, manageOut := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/manage_outputs=%v", pl.Name(), manageOut), func(t *testing.T) {
				o := staticruntime.DefaultOptions()
				o.Planner, o.ManageOutputTensors, o.CheckPlan = pl, manageOut, true
				m := prepareCase(t, c, o)
				want := map[int][]float32{}
				for _, n := range sizes {
					outs, err := m.NewRuntime().Run(batch(n))
					require.NoError(t, err)
					want[n] = append([]float32(nil), outs[0].Tensor().F32Contig()...)
				}
				pool := staticruntime.NewPool(m, 3) // fewer runtimes than goroutines
				errs := make(chan error, 8)
				for g := 0; g < 8; g++ {
					go func(g int) {
						var err error
						defer func() { errs <- err }()
						inputs := map[int]ivalue.IValue{}
						for _, n := range sizes {
							inputs[n] = batch(n)
						}
						for i := 0; i < 150 && err == nil; i++ {
							n := sizes[(g*5+i*3)%len(sizes)]
							err = pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
								outs, err := r.Run(inputs[n])
								if err != nil {
									return err
								}
								got := outs[0].Tensor().F32Contig()
								for k := range want[n] {
									if got[k] != want[n][k] {
										return fmt.Errorf("goroutine %d run %d batch %d: element %d is %v, want %v", g, i, n, k, got[k], want[n][k])
									}
								}
								if manageOut && i%2 == 0 {
									r.ReleaseOutputs() // odd runs keep theirs
								}
								return nil
							})
						}
					}(g)
				}
				for g := 0; g < 8; g++ {
					require.NoError(t, <-errs)
				}
			})
		}
	}
}

// TestUnmanagedBytes: tensors made in a loop body are counted outside
// the slab; inputs and outputs are not.
func TestUnmanagedBytes(t *testing.T) {
	m := prepare(t, `graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %m : Tensor = aten::mul(%acc, %acc)
      -> (%t, %m)
  %b : Tensor = aten::sigmoid(%y)
  %e : Tensor = aten::mul(%b, %b)
  return (%e)
`, nil)
	r := m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor(make([]float32, 100), 100))
	for i := 0; i < 2; i++ {
		_, err := r.Run(x, ivalue.FromInt(3))
		require.NoError(t, err)
	}
	st := r.MemoryStats()
	// The loop's last result (400 bytes), read by sigmoid; %b is managed.
	assert.Equal(t, int64(400), st.UnmanagedBytes)
	assert.Equal(t, int64(448), st.ManagedBytes)
}
