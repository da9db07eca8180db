package pyfallback

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

// TestInterpreterScaling measures how two interpreters in this process,
// each driven by a goroutine, scale over one on pure-Python work (the tokenizing loop of the
// tokenizer fixture, no Go between calls), with every interpreter
// loading the system's libpython file and with private copies (see
// openLibrary): two managers of two interpreters, one started with
// SharedLibEnv set; rounds interleaved, medians of the per-round ratios.
//
// Set GOSR_PY_SPEED=1 to run it; nothing else should use the CPU.
func TestInterpreterScaling(t *testing.T) {
	if os.Getenv("GOSR_PY_SPEED") == "" {
		t.Skip("set GOSR_PY_SPEED=1")
	}
	if MaxInterpreters() < 4 {
		t.Skipf("needs 4 interpreters, the process holds %d (GLIBC_TUNABLES=glibc.rtld.nns=5)", MaxInterpreters())
	}
	if shared != nil {
		t.Skip("run it alone (-run TestInterpreterScaling): it needs 4 fresh interpreters")
	}
	t.Setenv(SharedLibEnv, "1")
	sharedLib, err := NewManager(2)
	require.NoError(t, err)
	defer sharedLib.Close()
	os.Unsetenv(SharedLibEnv)
	private, err := NewManager(2)
	require.NoError(t, err)
	defer private.Close()
	for _, in := range sharedLib.Interpreters() {
		require.False(t, in.PrivateLibrary)
	}
	for _, in := range private.Interpreters() {
		require.True(t, in.PrivateLibrary)
	}
	const setup = `
import re, json
text = "The quick brown fox jumps over the lazy dog, again and again! " * 20
vocab = {}
def work():
    toks = re.findall(r"\w+|[^\w\s]", text.lower())
    ids = [vocab.setdefault(t, len(vocab)) for t in toks]
    return sum(ids) + len(json.dumps(ids))
def loop(k):
    for _ in range(k):
        work()
`
	ctx := context.Background()
	for _, m := range []*Manager{sharedLib, private} {
		for i := range 2 {
			s, err := m.AcquireHint(ctx, i)
			require.NoError(t, err)
			require.Equal(t, i, s.Interpreter())
			require.NoError(t, s.Exec(ctx, setup))
			s.Release()
		}
	}
	// rate is calls per second of g goroutines, goroutine i on
	// interpreter i of m (calls of about 2 ms: the hand-over to the
	// interpreter's thread is a small part).
	rate := func(m *Manager, gs int) float64 {
		var wg sync.WaitGroup
		var rs [2]float64
		for g := range gs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				n := 0
				for time.Since(t0) < 400*time.Millisecond {
					s, err := m.AcquireHint(ctx, g)
					if err == nil {
						err = s.Exec(ctx, "loop(20)")
						s.Release()
					}
					if err != nil {
						panic(err)
					}
					n++
				}
				rs[g] = float64(n) / time.Since(t0).Seconds()
			}()
		}
		wg.Wait()
		return rs[0] + rs[1]
	}
	var ratios [2][]float64
	for round := range 21 {
		for k, m := range []*Manager{sharedLib, private} {
			if round%2 == 1 {
				m = []*Manager{private, sharedLib}[k]
			}
			one := rate(m, 1)
			two := rate(m, 2)
			i := 0
			if m == private {
				i = 1
			}
			ratios[i] = append(ratios[i], two/one)
		}
	}
	t.Logf("2 interpreters over 1, every interpreter on the system's libpython: %.3fx", median(ratios[0]))
	t.Logf("2 interpreters over 1, each on a private copy of libpython:        %.3fx", median(ratios[1]))
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestSpareProc measures what the spare P (spareproc.go) saves: calls of
// the tokenizer fixture's tokenize (one batch a call, about 150 us) from
// 1 goroutine and from 2 goroutines on 2 interpreters, with GOMAXPROCS as
// before the manager opened and with the spare P, switched between
// rounds in this process: calls/s and CPU time per call (getrusage),
// medians over the rounds.
//
// Set GOSR_PY_SPEED=1 to run it; nothing else should use the CPU.
func TestSpareProc(t *testing.T) {
	if os.Getenv("GOSR_PY_SPEED") == "" {
		t.Skip("set GOSR_PY_SPEED=1")
	}
	m := manager(t)
	before, raised, ok := SpareProc()
	if !ok {
		t.Skipf("%s=0", SpareProcEnv)
	}
	defer runtime.GOMAXPROCS(raised)
	p, err := m.LoadPackage(filepath.Join(fixtures, "tokenizer.pt"))
	require.NoError(t, err)
	ctx := context.Background()
	batch := ivalue.NewList(
		ivalue.FromString("Return a new list containing all items from the iterable in ascending order."),
		ivalue.FromString("A custom key function can be supplied to customize the sort order, and the reverse flag can be set to request the result in descending order."),
		ivalue.FromString("If the file cannot be opened, an error is raised; the default encoding is platform dependent."),
		ivalue.FromString("Hello, world!"))
	fns := make([]*Object, m.Len())
	for i := range fns {
		s, err := m.AcquireHint(ctx, i)
		require.NoError(t, err)
		fns[i], err = s.Resolve(ctx, p, "textpkg.tok:tokenize")
		require.NoError(t, err)
		v, err := s.Call(ctx, fns[i], "Tuple[Tensor, Tensor]", batch)
		require.NoError(t, err)
		require.Equal(t, 4, v.List().Items[1].Tensor().Numel(), "one offset a text")
		s.Release()
	}
	// rate runs g goroutines, goroutine i on interpreter i, for 250 ms:
	// calls/s and CPU us per call.
	rate := func(g int) (float64, float64) {
		var a, b syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &a)
		var wg sync.WaitGroup
		var n [2]int
		t0 := time.Now()
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(t0) < 250*time.Millisecond {
					s, err := m.AcquireHint(ctx, i)
					if err == nil {
						_, err = s.Call(ctx, fns[s.Interpreter()], "Tuple[Tensor, Tensor]", batch)
						s.Release()
					}
					if err != nil {
						panic(err)
					}
					n[i]++
				}
			}()
		}
		wg.Wait()
		el := time.Since(t0)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &b)
		calls := float64(n[0] + n[1])
		cpu := time.Duration(b.Utime.Nano() + b.Stime.Nano() - a.Utime.Nano() - a.Stime.Nano())
		return calls / el.Seconds(), float64(cpu.Microseconds()) / calls
	}
	var rates, cpus [2][2][]float64 // [spare][goroutines-1]
	for range 15 {
		for k, procs := range []int{before, raised} {
			runtime.GOMAXPROCS(procs)
			for g := 1; g <= 2; g++ {
				r, c := rate(g)
				rates[k][g-1] = append(rates[k][g-1], r)
				cpus[k][g-1] = append(cpus[k][g-1], c)
			}
		}
	}
	for k, procs := range []int{before, raised} {
		one, two := median(rates[k][0]), median(rates[k][1])
		t.Logf("GOMAXPROCS %d: 1 goroutine %5.0f calls/s %5.1f us CPU a call; 2 goroutines on 2 interpreters %5.0f calls/s %5.1f us CPU a call; ratio %.2fx",
			procs, one, median(cpus[k][0]), two, median(cpus[k][1]), two/one)
	}
}
