package pyfallback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// onLockedThread runs fn on a goroutine locked to its thread, and the
// index in m of the interpreter that may run on that thread (the one
// that claimed it, or -1 when another manager's did).
func onLockedThread(t *testing.T, m *Manager, fn func(own int)) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		own := 0
		if id, ok := threads.owner(syscall.Gettid()); ok {
			own = -1
			for i, in := range m.interps {
				if in.id == id {
					own = i
				}
			}
		}
		fn(own)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("timed out")
	}
}

func setCallerThreads(t *testing.T, on bool) {
	old := callerThreads
	callerThreads = on
	t.Cleanup(func() { callerThreads = old })
}

// identOn is the Python thread ident a call on interpreter i of m runs on.
func identOn(t *testing.T, m *Manager, i int) (uint64, *interp) {
	ctx := context.Background()
	s, err := m.AcquireHint(ctx, i)
	require.NoError(t, err)
	defer s.Release()
	require.Equal(t, i, s.Interpreter())
	v, err := s.Eval(ctx, "__import__('threading').get_ident()")
	require.NoError(t, err)
	return uint64(v.Int()), s.in
}

// Calls run on the calling goroutine's thread (a Python thread of its
// own, not the interpreter's), unless HandoffEnv turned that off.
func TestCallsOnCallerThread(t *testing.T) {
	m := manager(t)
	for _, here := range []bool{true, false} {
		t.Run(fmt.Sprintf("caller_threads=%v", here), func(t *testing.T) {
			setCallerThreads(t, here)
			onLockedThread(t, m, func(own int) {
				if own < 0 {
					t.Skip("this thread belongs to another manager's interpreter")
				}
				a, in := identOn(t, m, own)
				b, _ := identOn(t, m, own)
				assert.Equal(t, a, b, "two calls from one thread run on one thread")
				if here {
					assert.NotEqual(t, uint64(in.ident), a, "ran on the interpreter's own thread")
				} else {
					assert.Equal(t, uint64(in.ident), a, "handed to the interpreter's thread")
				}
			})
		})
	}
}

// A thread runs one libpython copy only: a call of another interpreter
// made there is handed to that interpreter's thread. Both copies import
// hashlib (OpenSSL keeps per-thread state under pthread keys, which two
// copies on one thread would share) and get the right digest.
func TestThreadRunsOneCopy(t *testing.T) {
	m := manager(t)
	require.GreaterOrEqual(t, m.Len(), 2)
	setCallerThreads(t, true)
	sum := sha256.Sum256([]byte("gosr"))
	want := hex.EncodeToString(sum[:])
	ctx := context.Background()
	onLockedThread(t, m, func(own int) {
		if own < 0 {
			t.Skip("this thread belongs to another manager's interpreter")
		}
		other := (own + 1) % m.Len()
		handed := func(i int) uint64 { return m.Interpreters()[i].HandedOver }
		ownHanded, otherHanded := handed(own), handed(other)
		for k := range 20 {
			for _, i := range []int{own, other} {
				s, err := m.AcquireHint(ctx, i)
				require.NoError(t, err)
				require.Equal(t, i, s.Interpreter())
				v, err := s.Eval(ctx, "(__import__('hashlib').sha256(b'gosr').hexdigest(), __import__('threading').get_ident(), 'é'.isalpha())")
				s.Release()
				require.NoError(t, err, "round %d, interpreter %d", k, i)
				items := v.List().Items
				assert.Equal(t, want, items[0].Str())
				assert.True(t, items[2].Bool())
				if i == other {
					assert.Equal(t, int64(m.interps[other].ident), items[1].Int(), "interpreter %d ran on a thread another copy owns", other)
				} else {
					assert.NotEqual(t, int64(m.interps[own].ident), items[1].Int())
				}
			}
		}
		id, ok := threads.owner(syscall.Gettid())
		assert.True(t, ok)
		assert.Equal(t, m.interps[own].id, id)
		assert.Equal(t, own, m.threadOwner(), "python_call nodes prefer this interpreter here")
		assert.Equal(t, ownHanded, handed(own), "the thread's own copy ran here")
		assert.Equal(t, otherHanded+20, handed(other), "every call of the other copy was handed over")
	})
}

// A context ends a call on either path; the interrupt does not reach
// the next call, and the interpreter stays usable.
func TestInterruptEitherPath(t *testing.T) {
	m := manager(t)
	for _, here := range []bool{true, false} {
		t.Run(fmt.Sprintf("caller_threads=%v", here), func(t *testing.T) {
			setCallerThreads(t, here)
			s, err := m.Acquire(context.Background())
			require.NoError(t, err)
			defer s.Release()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			t0 := time.Now()
			// A bare except swallows the first interrupt: it comes again.
			err = s.Exec(ctx, "while True:\n    try:\n        pass\n    except BaseException:\n        pass\n")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(t0), 5*time.Second)
			for range 3 {
				v, err := s.Eval(context.Background(), "sum(range(100000))")
				require.NoError(t, err)
				assert.EqualValues(t, 4999950000, v.Int())
			}
			// A context that is already done: nothing runs.
			err = s.Exec(ctx, "raise SystemExit")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		})
	}
}

// Many goroutines over the manager's interpreters at once: calls on
// caller threads, calls handed over, calls waiting for a busy
// interpreter; every result right.
func TestConcurrentCalls(t *testing.T) {
	m := manager(t)
	setCallerThreads(t, true)
	ctx := context.Background()
	const goroutines, calls = 8, 150
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			for k := range calls {
				s, err := m.AcquireHint(ctx, (g+k)%m.Len())
				if err != nil {
					errs <- err
					return
				}
				msg := fmt.Sprintf("g%d-%d", g, k)
				v, err := s.Eval(ctx, fmt.Sprintf("__import__('hashlib').sha256(%q.encode()).hexdigest()", msg))
				s.Release()
				sum := sha256.Sum256([]byte(msg))
				if err == nil && v.Str() != hex.EncodeToString(sum[:]) {
					err = fmt.Errorf("%s: got %s (interpreter %d)", msg, v.String(), s.Interpreter())
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(2 * time.Minute):
			t.Fatal("timed out")
		}
	}
}

// Lists a fallback returns for a Tensor result: flat int lists take
// the one-pass path; nested, bool and float lists the general one;
// ragged ones are an error.
func TestListResultsToTensors(t *testing.T) {
	m := manager(t)
	ctx := context.Background()
	s, err := m.Acquire(ctx)
	require.NoError(t, err)
	defer s.Release()
	cases := []struct {
		expr  string
		dtype ivalue.DType
		sizes []int
		vals  string // fmt of the values
		err   string
	}{
		{"[3, 1, 2]", ivalue.Int64, []int{3}, "[3 1 2]", ""},
		{"(5, True)", ivalue.Int64, []int{2}, "[5 1]", ""},
		{"[True, False]", ivalue.Bool, []int{2}, "[true false]", ""},
		{"[1, 2.5]", ivalue.Float32, []int{2}, "[1 2.5]", ""},
		{"[[1, 2], [3, 4]]", ivalue.Int64, []int{2, 2}, "[1 2 3 4]", ""},
		{"[1, [2]]", 0, nil, "", "ragged"},
		{"[[1], [2, 3]]", 0, nil, "", "ragged"},
		{"[2**70]", 0, nil, "", "too big"},
	}
	require.NoError(t, s.Exec(ctx, "def val(e):\n    return eval(e)\n"))
	f, err := s.Global(ctx, "val")
	require.NoError(t, err)
	defer f.Close()
	for _, c := range cases {
		v, err := s.Call(ctx, f, "Tensor", ivalue.FromString(c.expr))
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.expr)
			continue
		}
		require.NoError(t, err, c.expr)
		x := v.Tensor()
		require.Equal(t, c.dtype, x.DType(), c.expr)
		assert.Equal(t, c.sizes, x.Sizes(), c.expr)
		var vals any
		switch c.dtype {
		case ivalue.Int64:
			vals = x.I64Contig()
		case ivalue.Bool:
			vals = x.BContig()
		case ivalue.Float32:
			vals = x.F32Contig()
		}
		assert.Equal(t, c.vals, fmt.Sprint(vals), c.expr)
	}
}
