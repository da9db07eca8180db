package loaders_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// Speed of forks and pools, as Benchmark functions whose iterations are
// rounds: the configurations compared run in turn within each round, so
// that the machine's drift from round to round falls on all alike, and
// the medians over rounds are reported. Nothing else should use the CPU:
//
//	go test -run '^$' -bench 'ForkInterop|PoolScaling' -benchtime 21x ./loaders/

// findCase returns the fixture called name in dir's manifest.
func findCase(b *testing.B, dir, name string) ptfixture.Case {
	cases, err := ptfixture.Manifest(dir)
	require.NoError(b, err)
	for _, c := range cases {
		if c.Name() == name {
			return c
		}
	}
	b.Fatalf("no fixture %s in %s", name, dir)
	return ptfixture.Case{}
}

// BenchmarkForkInterop times the two-branch CNN block (fork_cnn) with 1
// and 2 inter-op workers. Each round times a batch of runs (about 20 ms)
// with each; reported: the medians, us per run, and their ratio.
func BenchmarkForkInterop(b *testing.B) {
	for _, name := range []string{"fork_cnn.scripted_frozen", "fork_cnn.traced_frozen"} {
		b.Run(name, func(b *testing.B) {
			c := findCase(b, ptfixture.Committed(), name)
			in, _ := caseInputs(b, c)
			var rs [2]*staticruntime.StaticRuntime
			for i := range rs {
				rs[i] = loadModule(b, c.Path, i+1).NewRuntime()
				for range 5 {
					_, err := rs[i].Run(in...)
					require.NoError(b, err)
				}
			}
			t0 := time.Now()
			rs[0].Run(in...)
			per := max(1, int(20*time.Millisecond/max(time.Since(t0), time.Microsecond)))
			var samples [2][]float64
			b.ResetTimer()
			for range b.N {
				for i, r := range rs {
					t0 := time.Now()
					for range per {
						r.Run(in...)
					}
					samples[i] = append(samples[i], float64(time.Since(t0).Microseconds())/float64(per))
				}
			}
			b.StopTimer()
			m1, m2 := stats.Median(samples[0]), stats.Median(samples[1])
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(m1, "us-1-worker")
			b.ReportMetric(m2, "us-2-workers")
			b.ReportMetric(m1/m2, "x-speedup")
		})
	}
}

// BenchmarkPoolScaling measures the throughput of 1 and 2 goroutines
// through a Pool (DLRM-style model, resnet18), each round a pair: 1
// goroutine, then 2. For DLRM, in the same rounds, two controls: gosr
// itself in 1 and 2 processes, and PyTorch's Static Runtime in 1 and 2
// processes (where a Python with torch is found); each with its runs per
// busy CPU-second and the share of CPU time the hypervisor stole (see
// scaling). Reported per configuration (pool, gosr-procs, pt-procs): the
// median rates at 1 and 2, the ratio of the medians, the median of the
// per-round ratios; and the pool's allocations per request.
func BenchmarkPoolScaling(b *testing.B) {
	for _, name := range []string{"dlrm_like.scripted_frozen", "resnet18.scripted_frozen"} {
		b.Run(name, func(b *testing.B) {
			dir := ptfixture.Committed()
			if strings.HasPrefix(name, "resnet18") {
				dir = ptfixture.LargeDir(b)
			}
			c := findCase(b, dir, name)
			in, _ := caseInputs(b, c)
			pool := staticruntime.NewPool(loadModule(b, c.Path, 1), 2)
			run := func(r *staticruntime.StaticRuntime) error { _, err := r.Run(in...); return err }
			require.NoError(b, pool.Do(context.Background(), run))
			// Each goroutine runs for the span and its own rate is
			// requests over its own elapsed time; the rates add up.
			// (Timing a fixed number of requests per goroutine instead
			// counts the slower goroutine's tail as idle time of the
			// other.)
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
			// The controls, where the model is quick enough for rates
			// over the span: gosr and PyTorch's Static Runtime in 1 and 2
			// processes, which share no memory at all.
			var pt *ptScaling
			var procs *gosrProcs
			if strings.HasPrefix(name, "dlrm_like") {
				pt = startPTScaling(b, c, span)
				procs = startGosrProcs(b, c, span)
			}
			// Rounds are paired (1 goroutine, then 2, back to back): the
			// median of the per-round ratios is robust to the machine's
			// drift from round to round, which the ratio of medians is not.
			var pool1, pt1, procs1 scaling
			b.ResetTimer()
			for range b.N {
				pool1.pair(func() float64 { return throughput(1) }, func() float64 { return throughput(2) })
				if pt != nil {
					pt1.pair(func() float64 { return pt.rate(b, 1) }, func() float64 { return pt.rate(b, 2) })
				}
				if procs != nil {
					procs1.pair(func() float64 { return procs.rate(b, 1) }, func() float64 { return procs.rate(b, 2) })
				}
			}
			b.StopTimer()
			b.ReportMetric(0, "ns/op")
			pool1.report(b, "pool")
			if pt != nil {
				pt1.report(b, "pt-procs")
			}
			if procs != nil {
				procs1.report(b, "gosr-procs")
			}
			b.ReportMetric(testing.AllocsPerRun(5, func() { pool.Do(context.Background(), run) }), "allocs/request")
		})
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

// report adds the configuration's figures to b's, prefixed by name:
// median rates at 1 and 2, the ratio of the medians, the median paired
// ratio, and (where /proc/stat was read) the median paired ratio of runs
// per busy CPU-second and the stolen share of the CPU time wanted.
func (s *scaling) report(b *testing.B, name string) {
	a, c := stats.Median(s.r1), stats.Median(s.r2)
	b.ReportMetric(a, name+"-1-runs/s")
	b.ReportMetric(c, name+"-2-runs/s")
	b.ReportMetric(c/a, name+"-x")
	b.ReportMetric(stats.Median(s.ratios), name+"-x-paired")
	if len(s.cpuRatios) > 0 {
		share := func(i int) float64 { return 100 * s.steal[i] / (s.busy[i] + s.steal[i]) }
		b.ReportMetric(stats.Median(s.cpuRatios), name+"-x-per-busy-cpu")
		b.ReportMetric(share(0), name+"-1-steal-%")
		b.ReportMetric(share(1), name+"-2-steal-%")
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
func startPTScaling(t testing.TB, c ptfixture.Case, span time.Duration) *ptScaling {
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
func loadModule(t testing.TB, path string, interop int) *staticruntime.StaticModule {
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
func startWorker(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, *bufio.Scanner) {
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
func (p *ptScaling) rate(t testing.TB, n int) float64 {
	_, err := fmt.Fprintln(p.in, n)
	require.NoError(t, err)
	require.True(t, p.out.Scan(), "pt_pool_scaling.py ended")
	r, err := strconv.ParseFloat(p.out.Text(), 64)
	require.NoError(t, err)
	return r
}

// gosrProcs drives two copies of this test binary, each a pool worker
// (TestMain, poolWorker): gosr on one runtime per process, so that
// nothing in the process is shared between the two busy cores.
type gosrProcs struct {
	ins  [2]io.WriteCloser
	outs [2]*bufio.Scanner
}

func startGosrProcs(t testing.TB, c ptfixture.Case, span time.Duration) *gosrProcs {
	g := &gosrProcs{}
	for i := range g.ins {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), poolWorkerEnv+"="+strings.Join([]string{c.Path, c.Inputs, span.String()}, "\n"))
		cmd.Stderr = os.Stderr
		g.ins[i], g.outs[i] = startWorker(t, cmd)
	}
	return g
}

// rate runs n worker processes for one round, starting together, and
// returns their summed runs per second.
func (g *gosrProcs) rate(t testing.TB, n int) float64 {
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

// poolWorkerEnv, set in a child's environment, makes this test binary a
// pool worker (TestMain): a way for a benchmark to start copies of itself,
// not a setting.
const poolWorkerEnv = "GOSR_POOL_WORKER"

// poolWorker is the body of a gosrProcs worker. spec is the model's and
// its inputs' paths and the span, a line each. It prints "ready", then
// for each start time (Unix nanoseconds) read from stdin runs the model
// from then on for the span and prints its rate.
func poolWorker(spec string) error {
	parts := strings.Split(spec, "\n")
	if len(parts) != 3 {
		return fmt.Errorf("%s: want 3 lines (model, inputs, span), got %d", poolWorkerEnv, len(parts))
	}
	span, err := time.ParseDuration(parts[2])
	if err != nil {
		return err
	}
	in, err := loaders.ReadTorchSave(parts[1])
	if err != nil {
		return err
	}
	inputs := []ivalue.IValue{in}
	if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
		inputs = in.List().Items
	}
	m, err := loaders.Load(parts[0])
	if err != nil {
		return err
	}
	defer m.Close()
	o := staticruntime.DefaultOptions()
	o.InterOpThreads = 1
	sm, err := staticruntime.NewStaticModule(m.Graph, &o)
	if err != nil {
		return err
	}
	r := sm.NewRuntime()
	for range 1000 {
		if _, err := r.Run(inputs...); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		start, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return err
		}
		for time.Now().UnixNano() < start {
		}
		t0 := time.Now()
		n := 0
		for time.Since(t0) < span {
			r.Run(inputs...)
			n++
		}
		fmt.Println(float64(n) / time.Since(t0).Seconds())
	}
	return sc.Err()
}
