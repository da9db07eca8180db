package loaders_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// lifeCase is a model archive copied to a path of its own, so that
// /proc/self/maps tells whether this test's mapping of it is still there,
// with its inputs and what PyTorch computed.
type lifeCase struct {
	path   string
	inputs []ivalue.IValue
	want   []*ivalue.Tensor
}

func newLifeCase(t *testing.T, dir, archive, inputs, expected string) *lifeCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, archive))
	require.NoError(t, err)
	c := &lifeCase{path: filepath.Join(t.TempDir(), archive)}
	require.NoError(t, os.WriteFile(c.path, b, 0o644))
	in, err := loaders.ReadTorchSave(filepath.Join(dir, inputs))
	require.NoError(t, err)
	c.inputs = []ivalue.IValue{in}
	if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
		c.inputs = in.List().Items
	}
	want, err := loaders.ReadTorchSave(filepath.Join(dir, expected))
	require.NoError(t, err)
	c.want = fixture.Flatten([]ivalue.IValue{want})
	return c
}

// mlpCase is the committed MLP: its linear layers read their weights
// straight from the archive's mapping on every run.
func mlpCase(t *testing.T) *lifeCase {
	return newLifeCase(t, ptfixture.Committed(), "mlp.scripted.pt", "mlp.inputs.pt", "mlp.expected.pt")
}

// mapped reports whether the file at path is mapped into this process.
func mapped(t *testing.T, path string) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	return bytes.Contains(maps, []byte(path))
}

// matches reports whether outs are what PyTorch computed.
func (c *lifeCase) matches(outs []ivalue.IValue) error {
	got := fixture.Flatten(outs)
	if len(got) != len(c.want) {
		return errors.New("wrong number of outputs")
	}
	for i := range got {
		if err := fixture.Compare(got[i], c.want[i], 1e-4, 1e-5); err != nil {
			return err
		}
	}
	return nil
}

func (c *lifeCase) run(t *testing.T, r *staticruntime.StaticRuntime) {
	t.Helper()
	for run := range 2 {
		outs, err := r.Run(c.inputs...)
		require.NoError(t, err)
		require.NoError(t, c.matches(outs), "run %d", run)
	}
}

// TestModelCloseOrderings: closing the Model, the StaticModule or both,
// in every order relative to preparing and running, gives right results or
// errors, never a fault; the archive is unmapped exactly when the last of
// them lets it go.
func TestModelCloseOrderings(t *testing.T) {
	tests := []struct {
		name string
		do   func(t *testing.T, c *lifeCase, m *loaders.Model)
	}{
		{"close before prepare", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			require.NoError(t, m.Close())
			assert.False(t, mapped(t, c.path), "still mapped after the only reference went")
			_, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.ErrorContains(t, err, "archive mlp.scripted.pt: the archive is closed")
		}},
		{"close between prepare and run", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			require.NoError(t, m.Close())
			assert.True(t, mapped(t, c.path), "unmapped under a module")
			r := sm.NewRuntime()
			c.run(t, r)
			require.NoError(t, sm.Close())
			assert.False(t, mapped(t, c.path), "still mapped after the module closed")
			_, err = r.Run(c.inputs...)
			require.ErrorIs(t, err, staticruntime.ErrClosed)
			_, err = sm.NewRuntime().Run(c.inputs...)
			require.ErrorIs(t, err, staticruntime.ErrClosed)
			_, err = staticruntime.NewStaticModule(m.Graph, nil)
			require.ErrorContains(t, err, "the archive is closed")
		}},
		{"close between runs", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			r := sm.NewRuntime()
			c.run(t, r)
			require.NoError(t, m.Close())
			c.run(t, r)
			c.run(t, sm.NewRuntime())
			require.NoError(t, sm.Close())
			assert.False(t, mapped(t, c.path))
		}},
		{"module closed before the model", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			r := sm.NewRuntime()
			c.run(t, r)
			require.NoError(t, sm.Close())
			assert.True(t, mapped(t, c.path), "unmapped while the model is open")
			_, err = r.Run(c.inputs...)
			require.ErrorIs(t, err, staticruntime.ErrClosed)
			require.NoError(t, m.Close())
			assert.False(t, mapped(t, c.path))
		}},
		{"double close from two goroutines", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			c.run(t, sm.NewRuntime())
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 2 {
				wg.Add(2)
				go func() { defer wg.Done(); errs <- m.Close() }()
				go func() { defer wg.Done(); errs <- sm.Close() }()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, m.Close())
			assert.False(t, mapped(t, c.path))
		}},
		{"module collected without Close", func(t *testing.T, c *lifeCase, m *loaders.Model) {
			func() {
				sm, err := staticruntime.NewStaticModule(m.Graph, nil)
				require.NoError(t, err)
				c.run(t, sm.NewRuntime())
			}()
			require.NoError(t, m.Close())
			for i := 0; i < 100 && mapped(t, c.path); i++ {
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
			assert.False(t, mapped(t, c.path), "still mapped after the module was collected")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mlpCase(t)
			m, err := loaders.Load(c.path)
			require.NoError(t, err)
			require.True(t, mapped(t, c.path))
			tc.do(t, c, m)
		})
	}
}

// TestModelCloseDuringRuns: goroutines run the model through a Pool while
// the Model is closed and then the StaticModule: runs before the module's
// Close are right (the model's Close changes nothing for them), runs
// after it return ErrClosed, and the archive goes with the module.
func TestModelCloseDuringRuns(t *testing.T) {
	c := mlpCase(t)
	m, err := loaders.Load(c.path)
	require.NoError(t, err)
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	require.NoError(t, err)
	pool := staticruntime.NewPool(sm, 4)
	var good, afterModelClose, closed atomic.Int64
	var modelClosed, moduleClosed atomic.Bool
	var bad atomic.Value
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if i == 1 {
					started <- struct{}{}
				}
				wasModelClosed, wasModuleClosed := modelClosed.Load(), moduleClosed.Load()
				err := pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
					outs, err := r.Run(c.inputs...)
					if err != nil {
						return err
					}
					return c.matches(outs)
				})
				switch {
				case errors.Is(err, staticruntime.ErrClosed):
					closed.Add(1)
					return
				case err != nil:
					bad.Store(err)
					return
				case wasModuleClosed:
					bad.Store(errors.New("a run began after the module's Close returned and succeeded"))
					return
				}
				good.Add(1)
				if wasModelClosed {
					afterModelClose.Add(1)
				}
			}
		}()
	}
	for range 4 {
		<-started
	}
	require.NoError(t, m.Close())
	modelClosed.Store(true)
	for afterModelClose.Load() < 20 && bad.Load() == nil {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, sm.Close())
	moduleClosed.Store(true)
	wg.Wait()
	require.Nil(t, bad.Load())
	assert.Equal(t, int64(4), closed.Load(), "every goroutine stopped on ErrClosed")
	assert.False(t, mapped(t, c.path))
	t.Logf("%d runs right (%d after the model's Close)", good.Load(), afterModelClose.Load())
}

// TestPackageCloseOrderings: a model from a torch.package keeps the
// package's mapping through its modules the same way; a closed package
// refuses to load more.
func TestPackageCloseOrderings(t *testing.T) {
	c := newLifeCase(t, packageDir, "mlp.pt", "mlp.inputs.pt", "mlp.expected.pt")
	p, err := loaders.OpenPackage(c.path)
	require.NoError(t, err)
	m, err := p.LoadScript("model", "frozen.pkl")
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "a second Close must not take the model's reference")
	_, err = p.LoadScript("model", "model.pkl")
	require.ErrorContains(t, err, "package mlp.pt: the package is closed")
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.True(t, mapped(t, c.path))
	c.run(t, sm.NewRuntime())
	require.NoError(t, sm.Close())
	assert.False(t, mapped(t, c.path))
	_, err = p.Record("version")
	require.ErrorContains(t, err, "the package is closed")
}

// TestLoadBytesClose: a model over caller's memory follows the same rule
// (nothing faults there, but preparing a closed model is an error all
// the same).
func TestLoadBytesClose(t *testing.T) {
	c := mlpCase(t)
	b, err := os.ReadFile(c.path)
	require.NoError(t, err)
	m, err := loaders.LoadBytes("mlp.pt", b)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	_, err = staticruntime.NewStaticModule(m.Graph, nil)
	require.ErrorContains(t, err, "archive mlp.pt: the archive is closed")
}

// TestArchiveRetain: Retain counts like Acquire, its release gives back
// exactly one reference however often it is called, and a closed archive
// refuses it.
func TestArchiveRetain(t *testing.T) {
	c := mlpCase(t)
	a, err := loaders.OpenArchive(c.path)
	require.NoError(t, err)
	release, err := a.Retain()
	require.NoError(t, err)
	require.NoError(t, a.Close()) // the opener's
	_, err = a.Record("version")
	require.NoError(t, err, "the retained reference keeps it open")
	release()
	release()
	assert.False(t, mapped(t, c.path))
	_, err = a.Record("version")
	require.ErrorContains(t, err, "closed")
	_, err = a.Retain()
	require.ErrorContains(t, err, "archive mlp.scripted.pt: the archive is closed")
}
