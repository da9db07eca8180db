package pyfallback

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
)

// BenchmarkInterpreterScaling measures how two interpreters in this
// process, each driven by a goroutine, scale over one on pure-Python work
// (the tokenizing loop of the tokenizer fixture, no Go between calls),
// with every interpreter loading the system's libpython file and with
// private copies (see openLibrary): two managers of two interpreters, one
// with Options.SharedLibrary. Each iteration is one round: 1 then 2
// goroutines on each manager, the managers' order alternating. It
// reports the medians over rounds of the 2-over-1 ratio, and needs room
// for 4 interpreters; nothing else should use the CPU:
//
//	GLIBC_TUNABLES=glibc.rtld.nns=5 go test -run '^$' -bench InterpreterScaling -benchtime 21x ./pyfallback/
func BenchmarkInterpreterScaling(b *testing.B) {
	if MaxInterpreters() < 4 {
		b.Skipf("needs 4 interpreters, the process holds %d (GLIBC_TUNABLES=glibc.rtld.nns=5)", MaxInterpreters())
	}
	if shared != nil {
		b.Skip("run it alone (-run '^$' -bench InterpreterScaling): it needs 4 interpreters of its own")
	}
	sharedLib, err := NewManager(Options{Interpreters: 2, SharedLibrary: true})
	if err != nil {
		b.Skip(err)
	}
	defer sharedLib.Close()
	private, err := NewManager(Options{Interpreters: 2})
	if err != nil {
		b.Skip(err)
	}
	defer private.Close()
	for _, in := range sharedLib.Interpreters() {
		require.False(b, in.PrivateLibrary)
	}
	for _, in := range private.Interpreters() {
		require.True(b, in.PrivateLibrary)
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
			require.NoError(b, err)
			require.Equal(b, i, s.Interpreter())
			require.NoError(b, s.Exec(ctx, setup))
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
	b.ResetTimer()
	for round := range b.N {
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
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(stats.Median(ratios[0]), "x-2v1-shared-lib")
	b.ReportMetric(stats.Median(ratios[1]), "x-2v1-private-copy")
}

// BenchmarkSpareProc measures what the spare P (spareproc.go) saves:
// calls of the tokenizer fixture's tokenize (one batch a call, about
// 150 us) from 1 goroutine and from 2 goroutines on 2 interpreters, with
// GOMAXPROCS as the process had it (base) and one more (spare), switched
// within each round (an iteration): calls/s and CPU time per call
// (getrusage), medians over the rounds. Nothing else should use the CPU:
//
//	go test -run '^$' -bench SpareProc -benchtime 15x ./pyfallback/
func BenchmarkSpareProc(b *testing.B) {
	m := manager(b)
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	settings := []struct {
		name  string
		procs int
	}{{"base", before}, {"spare", before + 1}}
	p, err := m.LoadPackage(filepath.Join(fixtures, "tokenizer.pt"))
	require.NoError(b, err)
	ctx := context.Background()
	batch := ivalue.NewList(
		ivalue.FromString("Return a new list containing all items from the iterable in ascending order."),
		ivalue.FromString("A custom key function can be supplied to customize the sort order, and the reverse flag can be set to request the result in descending order."),
		ivalue.FromString("If the file cannot be opened, an error is raised; the default encoding is platform dependent."),
		ivalue.FromString("Hello, world!"))
	fns := make([]*Object, m.Len())
	for i := range fns {
		s, err := m.AcquireHint(ctx, i)
		require.NoError(b, err)
		fns[i], err = s.Resolve(ctx, p, "textpkg.tok:tokenize")
		require.NoError(b, err)
		v, err := s.Call(ctx, fns[i], "Tuple[Tensor, Tensor]", batch)
		require.NoError(b, err)
		require.Equal(b, 4, v.List().Items[1].Tensor().Numel(), "one offset a text")
		s.Release()
	}
	// rate runs g goroutines, goroutine i on interpreter i, for 250 ms:
	// calls/s and CPU us per call.
	rate := func(g int) (float64, float64) {
		var r0, r1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
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
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		calls := float64(n[0] + n[1])
		cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
		return calls / el.Seconds(), float64(cpu.Microseconds()) / calls
	}
	var rates, cpus [2][2][]float64 // [setting][goroutines-1]
	b.ResetTimer()
	for range b.N {
		for k, st := range settings {
			runtime.GOMAXPROCS(st.procs)
			for g := 1; g <= 2; g++ {
				r, c := rate(g)
				rates[k][g-1] = append(rates[k][g-1], r)
				cpus[k][g-1] = append(cpus[k][g-1], c)
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	for k, st := range settings {
		one, two := stats.Median(rates[k][0]), stats.Median(rates[k][1])
		b.ReportMetric(one, st.name+"-1g-calls/s")
		b.ReportMetric(stats.Median(cpus[k][0]), st.name+"-1g-cpu-us/call")
		b.ReportMetric(two, st.name+"-2g-calls/s")
		b.ReportMetric(stats.Median(cpus[k][1]), st.name+"-2g-cpu-us/call")
		b.ReportMetric(two/one, st.name+"-x-2g-v-1g")
		b.Logf("%s: GOMAXPROCS %d", st.name, st.procs)
	}
}
