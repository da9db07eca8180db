package loaders_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

func openLibtorch(t *testing.T) *libtorch.Backend {
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
					assert.Zero(t, testing.AllocsPerRun(10, func() { r.Run(inputs...) }), "allocations per Run")
				}
			})
		}
	}
}
