package hostile

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
)

var (
	childCase   = flag.String(ChildFlag, "", "run this one case as the harness's child (the harness passes it)")
	childMemory = flag.Int64(MemoryFlag, 1<<30, "the child's memory cap in bytes (the harness passes it)")
	reportPath  = flag.String("hostile-report", "", "write TestHostile's cases and outcomes to this file (.json: JSON; else a markdown table)")
	outputDir   = flag.String("hostile-output", "", "write the output of each child that failed to this folder, one file a case")
)

// TestMain is the child when the harness re-executes the test binary with
// ChildFlag: it runs that case alone and prints its verdict.
func TestMain(m *testing.M) {
	flag.Parse()
	if *childCase != "" {
		c, ok := lookupCase(*childCase)
		if !ok {
			fmt.Fprintf(os.Stderr, "hostile: no case %q\n", *childCase)
			os.Exit(2)
		}
		RunChild(c, *childMemory, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func lookupCase(name string) (Case, bool) {
	for _, c := range append(Cases(), selfCases()...) {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// childRunner re-executes this test binary as the child.
func childRunner(t *testing.T) *Runner {
	exe, err := os.Executable()
	require.NoError(t, err)
	return &Runner{Command: func(name string, memory int64) *exec.Cmd {
		return exec.Command(exe, "-"+ChildFlag+"="+name, "-"+MemoryFlag+"="+strconv.FormatInt(memory, 10))
	}}
}

// TestHostile runs every case in a child process (as many at once as
// -test.parallel, GOMAXPROCS by default) and fails each that crashed, hung,
// ran out of memory or gave a wrong result, with the child's last lines.
func TestHostile(t *testing.T) {
	r := childRunner(t)
	cases := Cases()
	var mu sync.Mutex
	var results []Result
	t.Run("case", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				// A case that could outlast the test binary's deadline is
				// not started: the binary's timeout would kill every
				// case and the report with it.
				if d, ok := t.Deadline(); ok && time.Until(d) < 3*cmp.Or(c.Timeout, r.Timeout, 20*time.Second)+10*time.Second {
					res := Result{Name: c.Name, Class: c.Class, Outcome: NotRun, Message: fmt.Sprintf("%s left before the test's deadline", time.Until(d).Round(time.Second))}
					mu.Lock()
					results = append(results, res)
					mu.Unlock()
					t.Fatalf("not run: %s", res.Message)
				}
				res := r.Run(c)
				mu.Lock()
				results = append(results, res)
				mu.Unlock()
				t.Logf("%s in %.2fs (CPU %.2fs), peak RSS %d MiB: %s", res.Outcome, res.Seconds, res.CPU, res.MaxRSS>>20, res.Message)
				if !res.Outcome.OK() {
					if *outputDir != "" {
						name := filepath.Join(*outputDir, strings.ReplaceAll(c.Name, "/", "_")+".txt")
						assert.NoError(t, os.WriteFile(name, []byte(res.Output), 0o644))
					}
					t.Errorf("%s: %s (%s)\nthe child's output, where it died:\n%s", res.Outcome, res.Message, res.Exit, res.Tail)
				}
			})
		}
	})
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	cpu := 0.0
	for _, r := range results {
		cpu += r.CPU
	}
	t.Logf("%d cases: %v; children's CPU time %.0fs", len(results), Counts(results), cpu)
	if *reportPath != "" {
		require.NoError(t, WriteReport(*reportPath, results))
	}
}

// TestCasesWellFormed: names are unique, classed, and "class/what".
func TestCasesWellFormed(t *testing.T) {
	seen := map[string]bool{}
	classes := map[string]int{}
	for _, c := range Cases() {
		assert.False(t, seen[c.Name], "case %s twice", c.Name)
		seen[c.Name] = true
		assert.True(t, strings.HasPrefix(c.Name, c.Class+"/"), "case %s is not named after its class %s", c.Name, c.Class)
		assert.NotNil(t, c.Run, c.Name)
		assert.NotContains(t, c.Name, " ", c.Name)
		classes[c.Class]++
	}
	manifest, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	var models []string
	for _, c := range manifest {
		if c.Variant == "scripted" {
			models = append(models, c.Model)
		}
	}
	assert.Subset(t, models, fixtureModels)
	for _, cl := range []string{ClassDeepPickle, ClassLongCode, ClassHugeSize, ClassZipBomb, ClassBadArchive, ClassRunInput, ClassBigGraph, ClassMisuse} {
		assert.Positive(t, classes[cl], "no cases of class %s", cl)
	}
}

var sink [][]byte

func recurse(n int) int {
	var pad [128]byte
	pad[n%128] = byte(n)
	return recurse(n+1) + int(pad[7])
}

// selfCases end in each way the harness must tell apart; the last field of
// each name is the outcome it must report.
func selfCases() []Case {
	return []Case{
		{Name: "self/ok-error", Run: func() error { return errors.New("rejected: bad input") }},
		{Name: "self/ok-success", Run: func() error { return nil }},
		{Name: "self/wrong", Run: func() error { return Wrongf("2 + 2 gave 5") }},
		{Name: "self/wrong-long-error", Run: func() error { return errors.New(strings.Repeat("(", MaxErrorBytes+1)) }},
		{Name: "self/fatal-stack-overflow", Run: func() error { return fmt.Errorf("%d", recurse(0)) }},
		{Name: "self/fatal-goroutine-panic", Run: func() error {
			done := make(chan bool)
			go func() { panic("escaped") }()
			<-done
			return nil
		}},
		{Name: "self/fatal-fault", Run: func() error {
			// What a tensor viewing an unmapped archive does.
			b, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				return err
			}
			p := (*float32)(unsafe.Pointer(&b[1<<15]))
			syscall.Munmap(b)
			return fmt.Errorf("%v", *p)
		}},
		{Name: "self/fatal-exit-without-verdict", Run: func() error { os.Exit(0); return nil }},
		{Name: "self/hang", Timeout: 300 * time.Millisecond, Run: func() error { time.Sleep(time.Hour); return nil }},
		{Name: "self/hang-busy", Timeout: 300 * time.Millisecond, Run: func() error {
			for n := 0; ; n++ {
				if n < 0 {
					return nil
				}
			}
		}},
		{Name: "self/oom", Memory: 128 << 20, Run: func() error {
			for {
				b := make([]byte, 16<<20)
				for i := range b {
					b[i] = 1
				}
				sink = append(sink, b)
			}
		}},
		{Name: "self/oom-silent", Memory: 128 << 20, Run: func() error {
			// Dies near its cap without saying why, as the Go runtime
			// sometimes does when the cap refuses it memory.
			b := make([]byte, 104<<20)
			for i := range b {
				b[i] = 1
			}
			sink = append(sink, b)
			time.Sleep(time.Second) // for the runner to see it
			return syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}},
		{Name: "self/ok-success-loud", Run: func() error {
			// Megabytes of output neither block the child nor bury the verdict.
			line := strings.Repeat("x", 1000) + "\n"
			for range 10000 {
				os.Stderr.WriteString(line)
			}
			return nil
		}},
	}
}

// TestHarnessClassifies: each self case ends as its name says, without
// taking the test binary down.
func TestHarnessClassifies(t *testing.T) {
	r := childRunner(t)
	r.Grace = 500 * time.Millisecond
	for _, c := range selfCases() {
		t.Run(strings.TrimPrefix(c.Name, "self/"), func(t *testing.T) {
			t.Parallel()
			res := r.Run(c)
			want := c.Name[strings.IndexByte(c.Name, '/')+1:]
			for _, o := range []Outcome{OKError, OKSuccess, Wrong, Fatal, Hang, OOM} {
				if strings.HasPrefix(want, string(o)) {
					assert.Equal(t, o, res.Outcome, "%s\n%s", res.Message, res.Tail)
				}
			}
			switch want {
			case "ok-error":
				assert.Equal(t, "rejected: bad input", res.Message)
			case "wrong":
				assert.Equal(t, "2 + 2 gave 5", res.Message)
			case "wrong-long-error":
				assert.Contains(t, res.Message, fmt.Sprintf("error message of %d bytes", MaxErrorBytes+1))
				assert.Less(t, len(res.Message), 2100)
			case "fatal-stack-overflow":
				assert.Equal(t, "fatal error: stack overflow", res.Message)
				assert.Contains(t, res.Tail, "recurse")
			case "fatal-goroutine-panic":
				assert.Equal(t, "panic: escaped", res.Message)
			case "fatal-fault":
				assert.Contains(t, res.Message, "unexpected fault address")
			case "fatal-exit-without-verdict":
				assert.Equal(t, "the child exited without a verdict", res.Message)
			case "hang":
				assert.Equal(t, "still running after 900ms", res.Message)
				assert.Contains(t, res.Tail, "time.Sleep", "the goroutine dump shows where it hung")
			case "hang-busy":
				// On a loaded machine the wall-clock limit may come first.
				assert.Contains(t, []string{"used 300ms of CPU time without finishing", "still running after 900ms"}, res.Message)
				assert.Contains(t, res.Tail, "selfCases", "the goroutine dump shows where it hung")
			case "oom":
				assert.Less(t, res.MaxRSS, int64(400<<20), "the cap held")
			case "oom-silent":
				assert.Contains(t, res.Message, "signal: killed at the memory cap")
			}
		})
	}
}

func TestCapture(t *testing.T) {
	c := newCapture(10)
	for i := range 100 {
		fmt.Fprintf(c, "line %02d\n", i)
	}
	s := c.String()
	assert.True(t, strings.HasPrefix(s, "line 00\nli"), s)
	assert.True(t, strings.HasSuffix(s, "e 99\n"), s)
	assert.Contains(t, s, "bytes left out")
	assert.Equal(t, "line 99", c.Tail(1))
	small := newCapture(100)
	small.Write([]byte("a\nb\n"))
	assert.Equal(t, "a\nb\n", small.String())
}

func TestParseVerdict(t *testing.T) {
	v, ok := parseVerdict("noise\n" + verdictPrefix + `{"outcome":"ok-error","message":"m"}` + "\nPASS\n")
	require.True(t, ok)
	assert.Equal(t, Verdict{Outcome: OKError, Message: "m"}, v)
	_, ok = parseVerdict("no verdict here\n")
	assert.False(t, ok)
	_, ok = parseVerdict("\n" + verdictPrefix + "{broken\n")
	assert.False(t, ok)
}

func TestWriteReport(t *testing.T) {
	rs := []Result{
		{Name: "zip-bomb/a", Class: ClassZipBomb, Outcome: OKError, Message: "too | big\nreally", Seconds: 0.5, CPU: 0.25, MaxRSS: 3 << 20},
		{Name: "long-code/b", Class: ClassLongCode, Outcome: Fatal, Message: "fatal error: stack overflow"},
	}
	dir := t.TempDir()
	require.NoError(t, WriteReport(dir+"/r.md", rs))
	md, err := os.ReadFile(dir + "/r.md")
	require.NoError(t, err)
	assert.Contains(t, string(md), "2 cases: ok-error 1, ok-success 0, wrong 0, fatal 1, hang 0, oom 0\n")
	assert.Contains(t, string(md), "| zip-bomb/a | zip-bomb | ok-error | 0.50 | 0.25 | 3 | too \\| big really |\n")
	require.NoError(t, WriteReport(dir+"/r.json", rs))
	js, err := os.ReadFile(dir + "/r.json")
	require.NoError(t, err)
	assert.Contains(t, string(js), `"fatal": 1`)
	assert.Contains(t, string(js), `"name": "long-code/b"`)
}

// TestCPUTime: the CPU time the runner reads from /proc agrees with the
// kernel's own account of this process.
func TestCPUTime(t *testing.T) {
	if _, ok := cpuTime(os.Getpid()); !ok {
		t.Skip("no /proc/<pid>/stat here: the runner uses the wall-clock limit alone")
	}
	var ru syscall.Rusage
	for n := 0; ; n++ {
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) > 300*time.Millisecond {
			break
		}
	}
	got, ok := cpuTime(os.Getpid())
	require.True(t, ok)
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	want := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	assert.InDelta(t, want.Seconds(), got.Seconds(), 0.05)
}
