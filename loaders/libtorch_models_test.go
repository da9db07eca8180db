package loaders_test

import (
	"errors"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/allocs"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

func openLibtorch(t testing.TB) *libtorch.Backend {
	t.Helper()
	b, err := libtorch.Open(libtorch.Options{Threads: 1})
	if errors.Is(err, libtorch.ErrNoShim) && os.Getenv("GOSR_REQUIRE_LIBTORCH") == "" {
		t.Skipf("libtorch backend: %v", err)
	}
	require.NoError(t, err)
	return b
}

// TestLibtorchModelsMatchPyTorch runs every fixture model with ATen's
// kernels (libtorch) and with the per-node choice (auto): outputs match
// PyTorch's on the first runs (auto is still timing both kernels then)
// and after, and a steady run allocates nothing in Go.
func TestLibtorchModelsMatchPyTorch(t *testing.T) {
	b := openLibtorch(t)
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	if !testing.Short() && os.Getenv("GOSR_LIBTORCH_LARGE") != "" {
		large, err := ptfixture.Manifest(ptfixture.LargeDir(t))
		require.NoError(t, err)
		cases = append(cases, large...)
	}
	for _, mode := range []ops.BackendMode{ops.BackendOnly, ops.BackendAuto} {
		for _, c := range cases {
			t.Run(mode.String()+"/"+c.Name(), func(t *testing.T) {
				m, err := loaders.Load(c.Path)
				require.NoError(t, err)
				defer m.Close()
				in, err := loaders.ReadTorchSave(c.Inputs)
				require.NoError(t, err)
				inputs := []ivalue.IValue{in}
				if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
					inputs = in.List().Items
				}
				want, err := loaders.ReadTorchSave(c.Expected)
				require.NoError(t, err)
				o := staticruntime.DefaultOptions()
				o.Backend, o.BackendMode = b, mode
				sm, err := staticruntime.NewStaticModule(m.Graph, &o)
				require.NoError(t, err)
				r := sm.NewRuntime()
				exp := fixture.Flatten([]ivalue.IValue{want})
				for run := 0; run < 16; run++ {
					out, err := r.Run(inputs...)
					require.NoError(t, err)
					got := fixture.Flatten(out)
					require.Equal(t, len(exp), len(got), "number of output tensors")
					for i := range got {
						require.NoError(t, fixture.Compare(got[i], exp[i], c.RTol, c.ATol), "output %d, run %d", i, run)
					}
				}
				if mode == ops.BackendAuto {
					// Nodes in branches not taken never run, so never choose.
					chs, decided := sm.AutoChoices(), 0
					for _, ch := range chs {
						if ch.Backend != "" {
							decided++
						}
					}
					assert.True(t, len(chs) == 0 || decided > 0, "auto decided none of %d nodes after 16 runs", len(chs))
				}
				if !raceflag.Enabled {
					assert.Zero(t, allocs.Steady(10, func() { r.Run(inputs...) }), "allocations per Run")
				}
			})
		}
	}
}

// BenchmarkBackends times every committed fixture model (one variant
// each) on the go, libtorch and auto backends in alternation, round
// after round, so the machine's drift hits all three alike, and reports
// the medians and auto's time over the faster of the other two.
//
//	go test -run '^$' -bench Backends -benchtime 1x ./loaders
func BenchmarkBackends(b *testing.B) {
	be := openLibtorch(b)
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(b, err)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Model] || (c.Variant != "scripted_frozen" && c.Variant != "traced_frozen") {
			continue
		}
		seen[c.Model] = true
		b.Run(c.Name(), func(b *testing.B) {
			in, err := loaders.ReadTorchSave(c.Inputs)
			require.NoError(b, err)
			inputs := []ivalue.IValue{in}
			if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
				inputs = in.List().Items
			}
			modes := []ops.BackendMode{ops.BackendGo, ops.BackendOnly, ops.BackendAuto}
			rts := make([]*staticruntime.StaticRuntime, len(modes))
			for i, mode := range modes {
				m, err := loaders.Load(c.Path)
				require.NoError(b, err)
				defer m.Close()
				o := staticruntime.DefaultOptions()
				o.Backend, o.BackendMode, o.InterOpThreads = be, mode, 2
				sm, err := staticruntime.NewStaticModule(m.Graph, &o)
				require.NoError(b, err)
				rts[i] = sm.NewRuntime()
				for w := 0; w < 32; w++ {
					_, err := rts[i].Run(inputs...)
					require.NoError(b, err)
				}
			}
			// Runs per sample: about 2 ms of the slowest backend.
			t0 := time.Now()
			for _, r := range rts {
				r.Run(inputs...)
			}
			per := max(1, int(2*time.Millisecond/max(time.Since(t0), time.Microsecond)))
			times := make([][]float64, len(modes))
			// The order rotates every round: each backend follows each
			// other one equally often (libtorch's large code evicts the
			// caches of whatever runs next).
			for round := 0; round < 15; round++ {
				for k := range rts {
					i := (k + round) % len(rts)
					r := rts[i]
					t0 := time.Now()
					for k := 0; k < per; k++ {
						r.Run(inputs...)
					}
					times[i] = append(times[i], float64(time.Since(t0).Nanoseconds())/float64(per)/1e3)
				}
			}
			med := make([]float64, len(modes))
			for i := range times {
				sort.Float64s(times[i])
				med[i] = times[i][len(times[i])/2]
			}
			b.ReportMetric(med[0], "go-us")
			b.ReportMetric(med[1], "libtorch-us")
			b.ReportMetric(med[2], "auto-us")
			b.ReportMetric(med[2]/min(med[0], med[1]), "auto/best")
		})
	}
}
