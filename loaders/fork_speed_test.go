package loaders_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestForkSpeed measures issue 6's figures on this machine, runs
// interleaved, medians:
//   - the two-branch CNN block with 1 and 2 inter-op workers;
//   - throughput of 1 and 2 goroutines through a Pool (DLRM-style model,
//     resnet18), and for DLRM, in the same rounds, two controls: gosr
//     itself in 1 and 2 processes, and PyTorch's Static Runtime in 1 and 2
//     processes; each with its runs per busy CPU-second and the share of
//     CPU time the hypervisor stole (see scaling).
//
// Set GOSR_FORK_SPEED=1 to run it; nothing else should use the CPU.
func TestForkSpeed(t *testing.T) {
	if os.Getenv("GOSR_FORK_SPEED") == "" {
		t.Skip("set GOSR_FORK_SPEED=1")
	}
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	large, err := ptfixture.Manifest(ptfixture.LargeDir(t))
	require.NoError(t, err)
	cases = append(cases, large...)
	find := func(name string) ptfixture.Case {
		for _, c := range cases {
			if c.Name() == name {
				return c
			}
		}
		t.Fatalf("no fixture %s", name)
		return ptfixture.Case{}
	}
	prep := func(c ptfixture.Case, interop int) (*staticruntime.StaticModule, []ivalue.IValue) {
		in, _ := caseInputs(t, c)
		return loadModule(t, c.Path, interop), in
	}

	// Inter-op parallelism inside one request.
	for _, name := range []string{"fork_cnn.scripted_frozen", "fork_cnn.traced_frozen"} {
		c := find(name)
		var rs [2]*staticruntime.StaticRuntime
		var in []ivalue.IValue
		for i := range rs {
			var sm *staticruntime.StaticModule
			sm, in = prep(c, i+1)
			rs[i] = sm.NewRuntime()
			for range 5 {
				_, err := rs[i].Run(in...)
				require.NoError(t, err)
			}
		}
		t0 := time.Now()
		rs[0].Run(in...)
		per := max(1, int(20*time.Millisecond/time.Since(t0)))
		var samples [2][]float64
		for range 21 {
			for i, r := range rs {
				t0 := time.Now()
				for range per {
					r.Run(in...)
				}
				samples[i] = append(samples[i], float64(time.Since(t0).Microseconds())/float64(per))
			}
		}
		m1, m2 := medianOf(samples[0]), medianOf(samples[1])
		t.Logf("%-26s interop 1: %8.1f us   interop 2: %8.1f us   speedup %.2fx", name, m1, m2, m1/m2)
	}

	// Many requests at once through a pool.
	for _, name := range []string{"dlrm_like.scripted_frozen", "resnet18.scripted_frozen"} {
		c := find(name)
		sm, in := prep(c, 1)
		pool := staticruntime.NewPool(sm, 2)
		run := func(r *staticruntime.StaticRuntime) error { _, err := r.Run(in...); return err }
		require.NoError(t, pool.Do(context.Background(), run))
		// Each goroutine runs for about 0.3 s and its own rate is
		// requests over its own elapsed time; the rates add up. (Timing
		// a fixed number of requests per goroutine instead counts the
		// slower goroutine's tail as idle time of the other.)
		const span = 200 * time.Millisecond
		throughput := func(g int) float64 {
			var wg sync.WaitGroup
			rates := make([]float64, g)
			for i := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					t0 := time.Now()
					n := 0
					for time.Since(t0) < span {
						pool.Do(context.Background(), run)
						n++
					}
					rates[i] = float64(n) / time.Since(t0).Seconds()
				}()
			}
			wg.Wait()
			sum := 0.0
			for _, r := range rates {
				sum += r
			}
			return sum
		}
		throughput(2) // makes the second runtime
		// The controls, in the same rounds where the model is quick enough
		// for rates over 0.2 s: gosr and PyTorch's Static Runtime in 1
		// and 2 processes, which share no memory at all.
		var pt *ptScaling
		var procs *gosrProcs
		if name == "dlrm_like.scripted_frozen" {
			pt = startPTScaling(t, c, span)
			procs = startGosrProcs(t, c, span)
		}
		// Rounds are paired (1 goroutine, then 2, back to back): the
		// median of the per-round ratios is robust to the machine's
		// drift from round to round, which the ratio of medians is not.
		var pool1, pt1, procs1 scaling
		for range 21 {
			pool1.pair(func() float64 { return throughput(1) }, func() float64 { return throughput(2) })
			if pt != nil {
				pt1.pair(func() float64 { return pt.rate(t, 1) }, func() float64 { return pt.rate(t, 2) })
			}
			if procs != nil {
				procs1.pair(func() float64 { return procs.rate(t, 1) }, func() float64 { return procs.rate(t, 2) })
			}
		}
		pool1.log(t, name, "1 goroutine", "2 goroutines", "")
		if pt != nil {
			pt1.log(t, name, "PyTorch SR, 1 process", "2 processes", " (the same rounds)")
		}
		if procs != nil {
			procs1.log(t, name, "gosr, 1 process", "2 processes", " (the same rounds)")
		}
		allocs := testing.AllocsPerRun(5, func() { pool.Do(context.Background(), run) })
		t.Logf("%-26s allocations per pooled request: %v", name, allocs)
	}
}

// scaling collects paired rounds of one configuration at 1 and at 2
// (goroutines or processes), with the machine's CPU time over each round
// from /proc/stat: busy time (user, nice, system, irq, softirq) and steal
// (time the hypervisor gave a vCPU that wanted to run to something
// else). Runs per busy CPU-second say what one core does while the
// other is busy too, whatever the hypervisor took.
type scaling struct {
	r1, r2, ratios, cpuRatios []float64
	busy, steal               [2]float64 // seconds, summed over rounds
}

func (s *scaling) pair(one, two func() float64) {
	var rates, perCPU [2]float64
	for i, f := range [2]func() float64{one, two} {
		b0, s0 := cpuStat()
		t0 := time.Now()
		rates[i] = f()
		w := time.Since(t0).Seconds()
		b1, s1 := cpuStat()
		s.busy[i] += b1 - b0
		s.steal[i] += s1 - s0
		if b1 > b0 {
			perCPU[i] = rates[i] / ((b1 - b0) / w)
		}
	}
	s.r1 = append(s.r1, rates[0])
	s.r2 = append(s.r2, rates[1])
	s.ratios = append(s.ratios, rates[1]/rates[0])
	if perCPU[0] > 0 && perCPU[1] > 0 {
		s.cpuRatios = append(s.cpuRatios, perCPU[1]/perCPU[0])
	}
}

func (s *scaling) log(t *testing.T, name, one, two, note string) {
	a, b := medianOf(s.r1), medianOf(s.r2)
	t.Logf("%-26s %s: %9.1f runs/s   %s: %9.1f runs/s   ratio %.2fx   median paired ratio %.2fx%s", name, one, a, two, b, b/a, medianOf(s.ratios), note)
	if len(s.cpuRatios) > 0 {
		share := func(i int) float64 { return 100 * s.steal[i] / (s.busy[i] + s.steal[i]) }
		t.Logf("%-26s   per busy CPU-second, 2 against 1: %.2f (median paired); steal %.1f%% / %.1f%% of the CPU time wanted", name, medianOf(s.cpuRatios), share(0), share(1))
	}
}

// cpuStat returns the machine's busy and steal CPU time in seconds, from
// /proc/stat's first line (zeros where it cannot be read).
func cpuStat() (busy, steal float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	var v [9]float64
	for i := 1; i < 9; i++ {
		v[i], _ = strconv.ParseFloat(f[i], 64)
	}
	const hz = 100 // USER_HZ
	return (v[1] + v[2] + v[3] + v[6] + v[7]) / hz, v[8] / hz
}

// ptScaling drives scripts/pt_pool_scaling.py: PyTorch's Static Runtime
// on a fixture in 1 or 2 worker processes, one round per request.
type ptScaling struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

// startPTScaling starts the script for c, or returns nil (and says why)
// where no python3 imports torch.
func startPTScaling(t *testing.T, c ptfixture.Case, span time.Duration) *ptScaling {
	py, err := ptfixture.FindPython("torch")
	if err != nil {
		t.Logf("no PyTorch control: %v", err)
		return nil
	}
	cmd := exec.Command(py, "../scripts/pt_pool_scaling.py", c.Path, c.Inputs, fmt.Sprint(span.Seconds()))
	cmd.Stderr = io.Discard // Static Runtime logs its options there
	in, out := startWorker(t, cmd)
	return &ptScaling{in: in, out: out}
}

// loadModule loads a fixture archive as a module with interop inter-op
// workers.
func loadModule(t *testing.T, path string, interop int) *staticruntime.StaticModule {
	m, err := loaders.Load(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	o := staticruntime.DefaultOptions()
	o.InterOpThreads = interop
	sm, err := staticruntime.NewStaticModule(m.Graph, &o)
	require.NoError(t, err)
	return sm
}

// startWorker starts cmd, stopped when the test ends (by closing its
// stdin), and waits for it to print "ready".
func startWorker(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, *bufio.Scanner) {
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "%s did not start", cmd.Path)
	require.Equal(t, "ready", sc.Text(), cmd.Path)
	return in, sc
}

// rate runs n worker processes for one round and returns their summed
// runs per second.
func (p *ptScaling) rate(t *testing.T, n int) float64 {
	_, err := fmt.Fprintln(p.in, n)
	require.NoError(t, err)
	require.True(t, p.out.Scan(), "pt_pool_scaling.py ended")
	r, err := strconv.ParseFloat(p.out.Text(), 64)
	require.NoError(t, err)
	return r
}

// gosrProcs drives two copies of this test binary, each running
// TestPoolWorker: gosr on one runtime per process, so that nothing in the
// process is shared between the two busy cores.
type gosrProcs struct {
	ins  [2]io.WriteCloser
	outs [2]*bufio.Scanner
}

func startGosrProcs(t *testing.T, c ptfixture.Case, span time.Duration) *gosrProcs {
	g := &gosrProcs{}
	for i := range g.ins {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPoolWorker$")
		cmd.Env = append(os.Environ(), "GOSR_POOL_WORKER="+strings.Join([]string{c.Path, c.Inputs, c.Expected, span.String()}, "\n"))
		cmd.Stderr = os.Stderr
		g.ins[i], g.outs[i] = startWorker(t, cmd)
	}
	return g
}

// rate runs n worker processes for one round, starting together, and
// returns their summed runs per second.
func (g *gosrProcs) rate(t *testing.T, n int) float64 {
	start := time.Now().Add(10 * time.Millisecond).UnixNano()
	for i := range n {
		_, err := fmt.Fprintln(g.ins[i], start)
		require.NoError(t, err)
	}
	sum := 0.0
	for i := range n {
		require.True(t, g.outs[i].Scan(), "pool worker ended")
		r, err := strconv.ParseFloat(g.outs[i].Text(), 64)
		require.NoError(t, err)
		sum += r
	}
	return sum
}

// TestPoolWorker is the body of a gosrProcs worker (GOSR_POOL_WORKER is
// the model, inputs and expected outputs' paths and the span, a line each): it prints "ready", then for each start time
// (Unix nanoseconds) read from stdin runs the model from then on for the
// span and prints its rate.
func TestPoolWorker(t *testing.T) {
	spec := os.Getenv("GOSR_POOL_WORKER")
	if spec == "" {
		t.Skip("a worker process of TestForkSpeed")
	}
	parts := strings.Split(spec, "\n")
	require.Len(t, parts, 4)
	span, err := time.ParseDuration(parts[3])
	require.NoError(t, err)
	in, _ := caseInputs(t, ptfixture.Case{Inputs: parts[1], Expected: parts[2]})
	r := loadModule(t, parts[0], 1).NewRuntime()
	for range 1000 {
		_, err := r.Run(in...)
		require.NoError(t, err)
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		start, err := strconv.ParseInt(sc.Text(), 10, 64)
		require.NoError(t, err)
		for time.Now().UnixNano() < start {
		}
		t0 := time.Now()
		n := 0
		for time.Since(t0) < span {
			r.Run(in...)
			n++
		}
		fmt.Println(float64(n) / time.Since(t0).Seconds())
	}
}
