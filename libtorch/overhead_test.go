package libtorch_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

func open(t testing.TB) *libtorch.Backend {
	t.Helper()
	b, err := libtorch.Open(libtorch.Options{Threads: 1})
	if errors.Is(err, libtorch.ErrNoShim) && os.Getenv("GOSR_REQUIRE_LIBTORCH") == "" {
		t.Skipf("libtorch backend: %v", err)
	}
	require.NoError(t, err)
	return b
}

// addChain is a graph of n 1-element adds, each reading the previous.
func addChain(n int) string {
	var s strings.Builder
	s.WriteString("graph(%x : Tensor, %y : Tensor):\n  %one : int = prim::Constant[value=1]()\n")
	prev := "%x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&s, "  %%a%d : Tensor = aten::add(%s, %%y, %%one)\n", i, prev)
		prev = fmt.Sprintf("%%a%d", i)
	}
	fmt.Fprintf(&s, "  return (%s)\n", prev)
	return s.String()
}

func chainRuntime(t testing.TB, b *libtorch.Backend, n int) (*staticruntime.StaticRuntime, []ivalue.IValue) {
	g, err := graph.Parse(addChain(n), nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode = b, ops.BackendOnly
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	return m.NewRuntime(), []ivalue.IValue{
		ivalue.FromTensor(ivalue.F32Tensor([]float32{1})), ivalue.FromTensor(ivalue.F32Tensor([]float32{2})),
	}
}

// TestAddChain: the chain computes what it should on libtorch, and a
// steady run allocates nothing.
func TestAddChain(t *testing.T) {
	b := open(t)
	r, in := chainRuntime(t, b, 32)
	for i := 0; i < 3; i++ {
		out, err := r.Run(in...)
		require.NoError(t, err)
		require.Equal(t, []float32{1 + 2*32}, out[0].Tensor().F32Contig())
	}
	before := b.Rebinds()
	for i := 0; i < 10; i++ {
		_, err := r.Run(in...)
		require.NoError(t, err)
	}
	require.Equal(t, before, b.Rebinds(), "steady runs remade ATen tensors")
	if !raceflag.Enabled {
		require.Zero(t, testing.AllocsPerRun(100, func() { r.Run(in...) }))
	}
}

// BenchmarkAddOverhead runs a chain of 64 1-element adds on libtorch and
// reports, per add, the time through gosr and the shim (ns/add), ATen's
// own time for the same add_out called in a loop from C++ (aten-ns/add),
// and the difference: the per-op overhead of the shim. The two are timed
// in alternation, 15 rounds, and the medians kept (the machines are
// noisy).
func BenchmarkAddOverhead(b *testing.B) {
	be := open(b)
	const n = 64
	r, in := chainRuntime(b, be, n)
	for i := 0; i < 10; i++ {
		_, err := r.Run(in...)
		require.NoError(b, err)
	}
	runs := max(b.N/15, 1)
	var viaGosr, viaATen, diff []float64
	b.ResetTimer()
	for round := 0; round < 15; round++ {
		t0 := time.Now()
		for i := 0; i < runs; i++ {
			r.Run(in...)
		}
		g := float64(time.Since(t0).Nanoseconds()) / float64(runs*n)
		a := float64(be.BenchAdd(runs*n).Nanoseconds()) / float64(runs*n)
		viaGosr, viaATen, diff = append(viaGosr, g), append(viaATen, a), append(diff, g-a)
	}
	b.StopTimer()
	b.ReportMetric(stats.Median(viaGosr), "ns/add")
	b.ReportMetric(stats.Median(viaATen), "aten-ns/add")
	b.ReportMetric(stats.Median(diff), "overhead-ns/add")
}

// BenchmarkAddChain is BenchmarkAddOverhead's gosr half alone (for
// profiling the shim's share).
func BenchmarkAddChain(b *testing.B) {
	be := open(b)
	const n = 64
	r, in := chainRuntime(b, be, n)
	for b.Loop() {
		r.Run(in...)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/add")
}
