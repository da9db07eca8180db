package loaders_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

var ignorePools = goleak.IgnoreTopFunction("github.com/gosr/gosr/fork.(*Pool).worker")

// forkCases are the committed fixtures whose models fork.
func forkCases(t *testing.T) []ptfixture.Case {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	var out []ptfixture.Case
	for _, c := range cases {
		if strings.HasPrefix(c.Model, "fork_") {
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// countForks counts prim::fork nodes in g and, recursively, its subgraphs.
func countForks(g *graph.Graph) int {
	n := 0
	g.Walk(func(nd *graph.Node) {
		if nd.Kind == "prim::fork" {
			n++
			n += countForks(graph.Subgraph(nd))
		}
	})
	return n
}

func caseInputs(t testing.TB, c ptfixture.Case) ([]ivalue.IValue, ivalue.IValue) {
	in, err := loaders.ReadTorchSave(c.Inputs)
	require.NoError(t, err)
	inputs := []ivalue.IValue{in}
	if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
		inputs = in.List().Items
	}
	want, err := loaders.ReadTorchSave(c.Expected)
	require.NoError(t, err)
	return inputs, want
}

func assertMatches(t testing.TB, c ptfixture.Case, out []ivalue.IValue, want ivalue.IValue, msg string) {
	got := fixture.Flatten(out)
	exp := fixture.Flatten([]ivalue.IValue{want})
	require.Equal(t, len(exp), len(got), "number of output tensors")
	for i := range got {
		assert.NoError(t, fixture.Compare(got[i], exp[i], c.RTol, c.ATol), "output %d, %s", i, msg)
	}
}

// TestForkFixtures: the archives' forks stay forks (each with its own
// subgraph module) and match PyTorch on every launcher and pool size.
func TestForkFixtures(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), ignorePools)
	for _, c := range forkCases(t) {
		t.Run(c.Name(), func(t *testing.T) {
			m, err := loaders.Load(c.Path)
			require.NoError(t, err)
			defer m.Close()
			assert.Positive(t, countForks(m.Graph), "the loader keeps torch.jit.fork as prim::fork")
			inputs, want := caseInputs(t, c)
			pool := fork.NewPool(2, 0)
			defer pool.Close()
			for _, interop := range []int{1, 2} {
				o := staticruntime.DefaultOptions()
				o.InterOpThreads, o.CheckPlan = interop, true
				g, err := loaders.Load(c.Path)
				require.NoError(t, err)
				sm, err := staticruntime.NewStaticModule(g.Graph, &o)
				require.NoError(t, err)
				r := sm.NewRuntime()
				for run := range 2 {
					out, err := r.Run(inputs...)
					require.NoError(t, err)
					assertMatches(t, c, out, want, fmt.Sprintf("interop %d, run %d", interop, run))
				}
				for _, l := range []fork.Launcher{fork.Inline, pool} {
					out, err := r.RunAsync(context.Background(), l, inputs...).Wait(context.Background())
					require.NoError(t, err)
					assertMatches(t, c, out, want, fmt.Sprintf("RunAsync on %T", l))
				}
				g.Close()
			}
		})
	}
}

// TestForkStress: 8 goroutines share one module through a pool of 3
// runtimes, each running the model's batch sizes in its own order;
// every output equals the single-threaded run's, bit for bit.
func TestForkStress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), ignorePools)
	iters := 250
	if raceflag.Enabled || testing.Short() {
		iters = 15
	}
	for _, c := range forkCases(t) {
		if c.Shapes == "" || !strings.HasSuffix(c.Variant, "frozen") {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			m, err := loaders.Load(c.Path)
			require.NoError(t, err)
			defer m.Close()
			o := staticruntime.DefaultOptions()
			o.InterOpThreads = 2
			sm, err := staticruntime.NewStaticModule(m.Graph, &o)
			require.NoError(t, err)
			pairs := readShapes(t, c)
			ref := sm.NewRuntime()
			wants := make([][]*ivalue.Tensor, len(pairs))
			for i, p := range pairs {
				out, err := ref.Run(p.inputs...)
				require.NoError(t, err)
				assertMatches(t, c, out, p.want, fmt.Sprintf("batch %d", p.batch))
				for _, tt := range fixture.Flatten(out) {
					wants[i] = append(wants[i], tt.Clone())
				}
			}
			pool := staticruntime.NewPool(sm, 3)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			done := make(chan struct{})
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range iters {
						i := (g*7 + k*(g+1)) % len(pairs)
						err := pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
							out, err := r.Run(pairs[i].inputs...)
							if err != nil {
								return err
							}
							got := fixture.Flatten(out)
							for j, w := range wants[i] {
								if !bitEqual(got[j], w) {
									return fmt.Errorf("goroutine %d, run %d, batch %d: output %d differs from the single-threaded run", g, k, pairs[i].batch, j)
								}
							}
							return nil
						})
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("stress run did not finish in 2 minutes (deadlock?)")
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func bitEqual(a, b *ivalue.Tensor) bool {
	if a.DType() != b.DType() || fmt.Sprint(a.Sizes()) != fmt.Sprint(b.Sizes()) {
		return false
	}
	ac, bc := a.Contiguous(), b.Contiguous()
	n, es := ac.Numel(), ac.DType().Size()
	return string(ac.Storage().Data[ac.Offset()*es:(ac.Offset()+n)*es]) == string(bc.Storage().Data[bc.Offset()*es:(bc.Offset()+n)*es])
}

// TestForkBadInput: an input the forked branch rejects. The error names
// the wait, the fork and the node inside the forked subgraph, with its
// source line; the runtime then runs good inputs.
func TestForkBadInput(t *testing.T) {
	for _, c := range forkCases(t) {
		if c.Model != "fork_ensemble" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			m, err := loaders.Load(c.Path)
			require.NoError(t, err)
			defer m.Close()
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			r := sm.NewRuntime()
			bad := ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 2, 31)) // the branches take 32 features
			_, err = r.Run(bad)
			require.Error(t, err)
			for _, want := range []string{"aten::wait", "in the task forked by", "prim::fork", "aten::linear"} {
				assert.Contains(t, err.Error(), want)
			}
			inputs, want := caseInputs(t, c)
			out, err := r.Run(inputs...)
			require.NoError(t, err)
			assertMatches(t, c, out, want, "after the error")
		})
	}
}
