package loaders_test

import (
	"testing"

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

// deviceFixtureCase runs one fixture model placed on dev and checks the
// device path: outputs match PyTorch's and come back on the host, the
// weights were copied to the device once (by NewStaticModule, not by
// runtimes), the slab is on the device, and steady runs allocate
// nothing, on the device or in Go, and copy only inputs in and outputs
// out.
func deviceFixtureCase(t *testing.T, b *libtorch.Backend, c ptfixture.Case, dev string) {
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
	exp := fixture.Flatten([]ivalue.IValue{want})

	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode, o.Device = b, ops.BackendOnly, dev
	before := b.DeviceStats()
	sm, err := staticruntime.NewStaticModule(m.Graph, &o)
	require.NoError(t, err)
	placed := b.DeviceStats()
	assert.Equal(t, dev, sm.Device().String())
	assert.Equal(t, placed.Allocs-before.Allocs, placed.Copies-before.Copies, "one allocation per weight copied")

	r1, r2 := sm.NewRuntime(), sm.NewRuntime()
	for run := 0; run < 4; run++ {
		for _, r := range []*staticruntime.StaticRuntime{r1, r2} {
			out, err := r.Run(inputs...)
			require.NoError(t, err)
			got := fixture.Flatten(out)
			require.Equal(t, len(exp), len(got), "number of output tensors")
			for i := range got {
				assert.True(t, got[i].Device().IsHost(), "output %d is on %s", i, got[i].Device())
				require.NoError(t, fixture.Compare(got[i], exp[i], c.RTol, c.ATol), "output %d, run %d", i, run)
			}
		}
	}
	st := r1.MemoryStats()
	assert.Equal(t, dev, st.Device)

	// Steady runs: no device allocation, one copy per tensor input and
	// output, and (plain tensor inputs and outputs) no Go allocation.
	s0 := b.DeviceStats()
	_, err = r1.Run(inputs...)
	require.NoError(t, err)
	s1 := b.DeviceStats()
	assert.Zero(t, s1.Allocs-s0.Allocs, "device allocations in a steady run")
	plain := true
	nIn := 0
	for _, v := range inputs {
		if v.IsTensor() {
			nIn++
		} else if v.List() != nil {
			plain = false
		}
	}
	out, _ := r1.Run(inputs...)
	nOut := 0
	for _, v := range out {
		if v.IsTensor() {
			nOut++
		} else if v.List() != nil {
			plain = false
		}
	}
	if plain {
		assert.Equal(t, int64(nIn+nOut), s1.Copies-s0.Copies, "copies in a steady run (inputs in, outputs out)")
		if !raceflag.Enabled {
			assert.Zero(t, allocs.Steady(10, func() { r1.Run(inputs...) }), "Go allocations per Run")
		}
	}
}

// TestLibtorchModelsOnDevice places every fixture model on libtorch's
// CPU allocator (the device path without a GPU), and on CUDA where
// libtorch has it and a GPU is present.
func TestLibtorchModelsOnDevice(t *testing.T) {
	b := openLibtorch(t)
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	devs := []string{"libtorch-cpu"}
	if b.Info().CUDADevices > 0 {
		devs = append(devs, "cuda:0")
	}
	for _, dev := range devs {
		for _, c := range cases {
			t.Run(dev+"/"+c.Name(), func(t *testing.T) { deviceFixtureCase(t, b, c, dev) })
		}
	}
}
