package loaders_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// runScriptCase loads a PyTorch-made archive, runs it with gosr and
// checks the outputs against what PyTorch computed.
func runScriptCase(t *testing.T, c ptfixture.Case, opts *staticruntime.Options) {
	allocRuns := 20
	if c.Large {
		allocRuns = 2 // a run takes tens of milliseconds
	}
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
	sm, err := staticruntime.NewStaticModule(m.Graph, opts)
	require.NoError(t, err)
	r := sm.NewRuntime()
	for run := 0; run < 2; run++ { // the second run uses the planned memory
		out, err := r.Run(inputs...)
		require.NoError(t, err, sm.Graph().String())
		got := fixture.Flatten(out)
		exp := fixture.Flatten([]ivalue.IValue{want})
		require.Equal(t, len(exp), len(got), "number of output tensors")
		for i := range got {
			assert.NoError(t, fixture.Compare(got[i], exp[i], c.RTol, c.ATol), "output %d, run %d", i, run)
		}
	}
	if opts == nil && !raceflag.Enabled {
		allocs := testing.AllocsPerRun(allocRuns, func() { r.Run(inputs...) })
		assert.Zero(t, allocs, "allocations per Run")
	}
}

func TestLoadMatchesPyTorch(t *testing.T) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			runScriptCase(t, c, nil)
		})
	}
}

func TestLoadMatchesPyTorchWithoutOutVariants(t *testing.T) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.EnableOutVariant = false
	o.OptimizeMemory = false
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			runScriptCase(t, c, &o)
		})
	}
}

func TestLoadLargeMatchesPyTorch(t *testing.T) {
	dir := ptfixture.LargeDir(t)
	cases, err := ptfixture.Manifest(dir)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			runScriptCase(t, c, nil)
		})
	}
}
