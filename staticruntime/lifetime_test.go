package staticruntime

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// closedBacking is a graph.Backing whose memory is gone.
type closedBacking struct{}

func (closedBacking) Retain() (func(), error) {
	return nil, errors.New("archive m.pt: the archive is closed")
}

// TestModuleRetainsBacking: a module holds exactly one reference to its
// graph's backing from NewStaticModule until Close (or until it is
// collected); a failed preparation holds none; a backing already gone is
// an error before any pass reads the constants.
func TestModuleRetainsBacking(t *testing.T) {
	parse := func(t *testing.T, ir string) *graph.Graph {
		g, err := graph.Parse(ir, nil)
		require.NoError(t, err)
		return g
	}
	t.Run("close releases once", func(t *testing.T) {
		g := parse(t, chainIR(2))
		b := &checkBacking{}
		g.Backing = b
		m, err := NewStaticModule(g, nil)
		require.NoError(t, err)
		assert.Equal(t, int32(1), b.retained.Load())
		assert.Zero(t, b.released.Load(), "released while the module is open")
		require.NoError(t, m.Close())
		require.NoError(t, m.Close())
		assert.Equal(t, int32(1), b.released.Load())
	})
	t.Run("failed preparation releases", func(t *testing.T) {
		g := parse(t, "graph(%x : Tensor):\n  %y : Tensor = aten::frobnicate(%x)\n  return (%y)\n")
		b := &checkBacking{}
		g.Backing = b
		_, err := NewStaticModule(g, nil)
		require.ErrorContains(t, err, "aten::frobnicate")
		assert.Equal(t, int32(1), b.retained.Load())
		assert.Equal(t, int32(1), b.released.Load())
	})
	t.Run("backing gone", func(t *testing.T) {
		g := parse(t, chainIR(2))
		g.Backing = closedBacking{}
		_, err := NewStaticModule(g, nil)
		require.ErrorContains(t, err, "archive m.pt: the archive is closed")
	})
	t.Run("collected module releases", func(t *testing.T) {
		g := parse(t, chainIR(2))
		b := &checkBacking{}
		g.Backing = b
		m, err := NewStaticModule(g, nil)
		require.NoError(t, err)
		r := m.NewRuntime()
		_, err = r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1}, 1)), ivalue.FromTensor(ivalue.ScalarTensor(2)))
		require.NoError(t, err)
		runtime.GC()
		assert.Zero(t, b.released.Load(), "released while a runtime is reachable")
		runtime.KeepAlive(r)
		for i := 0; i < 50 && b.released.Load() == 0; i++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		assert.Equal(t, int32(1), b.released.Load(), "not released after the module and its runtimes were collected")
	})
}

// TestClosedModule: after Close every way into a run, on runtimes made
// before or after, returns ErrClosed; the other methods still answer.
func TestClosedModule(t *testing.T) {
	m := prepareIR(t, chainIR(2))
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3, 4}, 2, 2))
	w := ivalue.FromTensor(ivalue.ScalarTensor(2))
	before := m.NewRuntime()
	_, err := before.Run(x, w)
	require.NoError(t, err)
	pool := NewPool(m, 2)
	require.NoError(t, m.Close())
	ctx := context.Background()
	for _, r := range []*StaticRuntime{before, m.NewRuntime(), before.Clone()} {
		runs := map[string]func() error{
			"Run":        func() error { _, err := r.Run(x, w); return err },
			"RunContext": func() error { _, err := r.RunContext(ctx, x, w); return err },
			"RunAsync":   func() error { _, err := r.RunAsync(ctx, fork.Inline, x, w).Wait(ctx); return err },
			"BenchmarkIndividualOps": func() error {
				_, err := r.BenchmarkIndividualOps([]ivalue.IValue{x, w}, 0, 1)
				return err
			},
		}
		for name, run := range runs {
			assert.ErrorIs(t, run(), ErrClosed, name)
		}
		assert.NotPanics(t, func() { r.MemoryStats(); r.ReleaseOutputs() })
	}
	_, err = pool.Run(ctx, x, w)
	assert.ErrorIs(t, err, ErrClosed, "Pool.Run")
}
