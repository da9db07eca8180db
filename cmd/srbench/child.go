package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// defaultPTTimeout is -pt-timeout's default. The scripts report progress
// after every timed repeat, the slowest of which (mobilenet_v2's 300
// interpreter runs) takes well under it on the 2-core machine.
const defaultPTTimeout = 120 * time.Second

// errPTTimeout is what runChild returns for a child it killed.
var errPTTimeout = errors.New("PyTorch timed out")

// progressBuffer collects a child's stdout and stderr and notes when it
// last wrote anything.
type progressBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	last atomic.Int64 // unix ns of the last write
}

func (b *progressBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last.Store(time.Now().UnixNano())
	return b.buf.Write(p)
}

func (b *progressBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runChild runs a PyTorch script with intraOp intra-op threads (OpenMP's
// and MKL's, as the scripts' torch.set_num_threads) and returns its
// combined output. A child silent for timeout (0: defaultPTTimeout) is
// killed and errPTTimeout returned: PyTorch's benchmark loops have hung
// (fork_ensemble.traced_frozen.pt once never returned), and one model
// must not stop a whole compare. Progress, not the whole run, is timed,
// so that large models (minutes in all) are not cut short.
func runChild(timeout time.Duration, intraOp int, py string, args ...string) (string, error) {
	if timeout <= 0 {
		timeout = defaultPTTimeout
	}
	cmd := exec.Command(py, args...)
	n := strconv.Itoa(max(intraOp, 1))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+n, "MKL_NUM_THREADS="+n)
	var out progressBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A grandchild holding the pipe must not keep Wait from returning.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out.last.Store(start.UnixNano())
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var timedOut atomic.Bool
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(min(timeout/10, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if time.Since(time.Unix(0, out.last.Load())) >= timeout {
					timedOut.Store(true)
					cmd.Process.Kill() //nolint:errcheck // it may have just exited
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-watched
	if timedOut.Load() {
		return out.String(), fmt.Errorf("%w (no progress for %v, killed after %v)", errPTTimeout, timeout, time.Since(start).Round(time.Second))
	}
	if err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, lastLines(out.String(), 5))
	}
	return out.String(), nil
}

// ptArgs are the arguments the scripts share after their model files:
// warm-up runs, timed runs and repeats for PyTorch, sized from gosr's
// time per run (usPerIter). Fast models get about 50 ms of gosr's time
// per repeat and at least 100 runs; slow ones (video, swin, maxvit: tens
// of milliseconds to seconds a run, several times that in Debian's
// PyTorch) about a second and at least 3 runs, with no more warm-up runs
// than timed ones, so that a repeat reports progress within the child's
// timeout.
func ptArgs(f timingFlags, usPerIter float64) []string {
	iters, warmup := ptIters(f.warmup, usPerIter)
	return []string{strconv.Itoa(warmup), strconv.Itoa(iters), strconv.Itoa(max(f.repeats, 1))}
}

// ptIters is ptArgs' sizing: timed runs and warm-up runs.
func ptIters(warmup int, usPerIter float64) (int, int) {
	us := max(usPerIter, 1)
	iters := max(int(50000/us), min(100, int(1e6/us)), 3)
	return iters, min(warmup, iters)
}

// srLine is the time per run in PyTorch's Static Runtime benchmark report.
var srLine = regexp.MustCompile(`Static runtime ms per iter: ([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)`)

// readChild reads a PyTorch script's output: the Static Runtime times
// its benchmark reports printed (us per run, in order), and its last
// line, a JSON object, into result.
func readChild(out string, result any) ([]float64, error) {
	var srs []float64
	for _, mm := range srLine.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(mm[1], 64)
		srs = append(srs, v*1000)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), result); err != nil {
		return nil, fmt.Errorf("reading PyTorch's results: %v: %s", err, lastLines(out, 5))
	}
	return srs, nil
}

// lastLines is s's last n lines, for errors.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
