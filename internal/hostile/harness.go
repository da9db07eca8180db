// Package hostile is a harness of hostile inputs: deep pickles, long chains
// of TorchScript code, huge declared sizes, zip bombs, overflowing shapes,
// misuse of the API. Each case runs in a child process with a wall-clock
// timeout and a memory cap, so that what recover cannot catch (a stack
// overflow, a fault, running out of memory, a hang) fails that case
// instead of killing the test binary.
//
// The test binary is the child: TestMain runs one case when given
// ChildFlag, and TestHostile runs every case of Cases that way:
//
//	go test ./internal/hostile -run 'TestHostile/case/zip-bomb' -v
//	go test ./internal/hostile -run TestHostile -hostile-report cases.md -hostile-output dir
//
// writes the table of cases and outcomes, and each failed child's output.
package hostile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Outcome is what became of a case.
type Outcome string

const (
	OKError   Outcome = "ok-error"   // rejected with an error
	OKSuccess Outcome = "ok-success" // ran, and the case checked the result
	Fatal     Outcome = "fatal"      // the child died: a fatal runtime error, an escaped panic, a signal, no verdict
	Hang      Outcome = "hang"       // still running at the timeout
	OOM       Outcome = "oom"        // hit the memory cap
	Wrong     Outcome = "wrong"      // a hostile input accepted, a result unlike the reference, an unreadable error
	NotRun    Outcome = "not-run"    // not started: the test binary's deadline was near
)

// OK reports whether the outcome is one gosr must give: an error or a
// checked result.
func (o Outcome) OK() bool { return o == OKError || o == OKSuccess }

// Classes of cases, as the campaign grouped them.
const (
	ClassDeepPickle = "deep-pickle"
	ClassLongCode   = "long-code"
	ClassHugeSize   = "huge-size"
	ClassZipBomb    = "zip-bomb"
	ClassBadArchive = "bad-archive"
	ClassRunInput   = "run-input"
	ClassBigGraph   = "big-graph"
	ClassMisuse     = "misuse"
	ClassSelf       = "self" // the harness's own tests
)

// Case is one hostile input and the check of what gosr made of it.
type Case struct {
	Name  string // unique; "class/what"
	Class string
	// Run feeds the input and checks the result. It returns nil when gosr
	// ran it and the result matched the reference, gosr's error when the
	// input was rejected, or an error from Wrongf when gosr accepted what
	// it must reject or gave a wrong result.
	Run func() error
	// Timeout and Memory override the runner's (0: the runner's). Memory
	// is what the case may take beyond what the child holds at start.
	Timeout time.Duration // CPU time; the wall-clock limit is three times it
	Memory  int64
}

// MaxErrorBytes bounds an error message: an error is for a person to read,
// and one that prints a hostile value whole amplifies the input into logs.
const MaxErrorBytes = 64 << 10

type wrongError struct{ msg string }

func (e *wrongError) Error() string { return e.msg }

// Wrongf is the error a case returns when gosr accepted a hostile input or
// gave a result that differs from the reference.
func Wrongf(format string, args ...any) error {
	return &wrongError{fmt.Sprintf(format, args...)}
}

// IsWrong reports whether err came from Wrongf.
func IsWrong(err error) bool {
	var w *wrongError
	return errors.As(err, &w)
}

// Verdict is what the child reports on its last line of output.
type Verdict struct {
	Outcome      Outcome `json:"outcome"`
	Message      string  `json:"message,omitempty"` // the error, cut to 2,000 bytes
	MessageBytes int     `json:"message_bytes,omitempty"`
	Seconds      float64 `json:"seconds"` // the case's own time, without the child's start
	StartData    int64   `json:"start_data,omitempty"`
}

// verdictPrefix starts the child's verdict line; the parent takes the last.
const verdictPrefix = "hostile-verdict: "

// ChildFlag names the case the test binary runs as a child; MemoryFlag
// gives its memory cap in bytes.
const (
	ChildFlag  = "hostile.case"
	MemoryFlag = "hostile.memory"
)

// maxStack is the child's goroutine stack limit: below the memory cap, so
// that runaway recursion reports as the stack overflow it is rather than
// as the out-of-memory of growing a stack to Go's default 1 GB.
const maxStack = 256 << 20

// RunChild runs c in this process, which must be the child the runner
// started: it caps memory, runs the case and prints the verdict line to w.
// A case that crashes never prints one.
func RunChild(c Case, memory int64, w io.Writer) {
	start, err := capMemory(memory)
	if err != nil {
		fmt.Fprintf(w, "hostile: cannot cap memory: %v\n", err)
	}
	// On the runner's SIGQUIT, print the stacks of goroutines running on
	// other threads too (a busy loop is one): at "all" the runtime says
	// only "running on other thread; stack unavailable". "crash" then
	// aborts, so no core file is written (noCore).
	noCore()
	debug.SetTraceback("crash")
	debug.SetMaxStack(int(min(int64(maxStack), max(memory/4, 16<<20))))
	t0 := time.Now()
	err = c.Run()
	v := Verdict{Outcome: OKSuccess, Seconds: time.Since(t0).Seconds(), StartData: start}
	if err != nil {
		msg := err.Error()
		v.Outcome, v.MessageBytes = OKError, len(msg)
		switch {
		case IsWrong(err):
			v.Outcome = Wrong
		case len(msg) > MaxErrorBytes:
			v.Outcome = Wrong
			msg = fmt.Sprintf("error message of %d bytes (more than %d): %s", len(msg), MaxErrorBytes, msg)
		}
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		v.Message = strings.ToValidUTF8(msg, "?")
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "\n%s%s\n", verdictPrefix, b)
}

// Result is a case's outcome as the parent saw it.
type Result struct {
	Name    string  `json:"name"`
	Class   string  `json:"class"`
	Outcome Outcome `json:"outcome"`
	Message string  `json:"message,omitempty"` // the verdict's, or the reason the child died
	Seconds float64 `json:"seconds"`           // wall clock of the child
	CPU     float64 `json:"cpu_seconds"`       // user and system time of the child
	MaxRSS  int64   `json:"max_rss"`           // the child's peak resident memory, bytes
	Exit    string  `json:"exit,omitempty"`    // how the child ended, when it failed
	Tail    string  `json:"-"`                 // of a failed child's output, why it died and where
	Output  string  `json:"-"`                 // a failed child's output (head and tail of it)
}

// Runner runs cases in child processes.
type Runner struct {
	// Command makes the command that runs the named case as a child with
	// the given memory cap (the test binary, re-executed with ChildFlag).
	Command func(name string, memory int64) *exec.Cmd
	// Timeout bounds a child's CPU time (user and system, all threads),
	// and three times it its wall-clock time: a loop that does not end
	// is caught by the first however busy the machine is (a loaded CI
	// machine stretches wall-clock time, not CPU time), a child that
	// waits forever by the second. 0: 20 s.
	Timeout time.Duration
	Memory  int64 // 0: 1 GiB
	// Grace is how long a child that ran out of time has to print its
	// goroutines (SIGQUIT) before it is killed; 0: 2 s.
	Grace time.Duration
}

// Run runs c in a child and classifies how it ended.
func (r *Runner) Run(c Case) Result {
	timeout, memory := c.Timeout, c.Memory
	if timeout == 0 {
		timeout = r.Timeout
	}
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	if memory == 0 {
		memory = r.Memory
	}
	if memory == 0 {
		memory = 1 << 30
	}
	grace := r.Grace
	if grace == 0 {
		grace = 2 * time.Second
	}
	res := Result{Name: c.Name, Class: c.Class}
	cmd := r.Command(c.Name, memory)
	out := newCapture(256 << 10)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = grace // output still held open by anything the child started
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		res.Outcome, res.Message = Fatal, "cannot start the child: "+err.Error()
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var hung string
	var err error
	var peakData, dataCap int64 // as last seen: the child's data segment and its cap
	wall := time.NewTimer(3 * timeout)
	defer wall.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-wall.C:
			hung = fmt.Sprintf("still running after %s", 3*timeout)
		case <-tick.C:
			if d, l, ok := dataUse(cmd.Process.Pid); ok {
				peakData, dataCap = max(peakData, d), l
			}
			if cpu, ok := cpuTime(cmd.Process.Pid); ok && cpu > timeout {
				hung = fmt.Sprintf("used %s of CPU time without finishing", timeout)
			}
		}
		if hung != "" {
			// A Go child prints every goroutine's stack on SIGQUIT: where
			// it hung.
			cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case err = <-done:
			case <-time.After(grace):
				cmd.Process.Kill()
				err = <-done
			}
			break wait
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		res.MaxRSS = maxRSS(ps)
		res.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
		res.Exit = ps.String()
	}
	text := out.String()
	v, haveVerdict := parseVerdict(text)
	switch {
	case hung != "":
		res.Outcome, res.Message = Hang, hung
	case isOOM(text):
		res.Outcome, res.Message = OOM, fmt.Sprintf("%s (memory cap %d MiB)", fatalLine(text), memory>>20)
	case err != nil && dataCap > 0 && peakData > dataCap-nearCap:
		// The Go runtime does not always say so when the cap refuses it
		// memory (a fault in the collector's own allocations).
		why := fatalLine(text)
		if why == "" {
			why = err.Error()
		}
		res.Outcome, res.Message = OOM, fmt.Sprintf("%s at the memory cap (%d of %d MiB of data seen)", why, peakData>>20, dataCap>>20)
	case err != nil:
		res.Outcome, res.Message = Fatal, fatalLine(text)
		if res.Message == "" {
			res.Message = err.Error()
		}
	case !haveVerdict:
		res.Outcome, res.Message = Fatal, "the child exited without a verdict"
	default:
		res.Outcome, res.Message = v.Outcome, v.Message
	}
	if res.Outcome.OK() {
		res.Exit = ""
	} else {
		res.Tail, res.Output = excerpt(text, out.Tail(40)), text
	}
	return res
}

func parseVerdict(text string) (Verdict, bool) {
	var v Verdict
	i := strings.LastIndex(text, "\n"+verdictPrefix)
	if i < 0 {
		return v, false
	}
	line := text[i+1+len(verdictPrefix):]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	if json.Unmarshal([]byte(line), &v) != nil || v.Outcome == "" {
		return v, false
	}
	return v, true
}

// nearCap is how close to its memory cap a child that died was taken to
// have died of it.
const nearCap = 32 << 20

// oomMarks are how the Go runtime dies when the memory cap refuses it.
var oomMarks = []string{
	"fatal error: runtime: out of memory",
	"fatal error: out of memory",
	"fatal error: runtime: cannot allocate memory",
	"out of memory allocating",
	"pthread_create failed: Resource temporarily unavailable", // a thread's stack refused
}

func isOOM(text string) bool {
	for _, m := range oomMarks {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// deathMarks start the lines in which a child says why it died: the
// runtime's "fatal error:", an escaped "panic:", a fault, SIGQUIT's dump.
var deathMarks = []string{"fatal error: ", "panic: ", "unexpected fault address", "SIGSEGV", "SIGBUS", "SIGQUIT: quit"}

// deathIndex is where the earliest of deathMarks is in text, or -1.
func deathIndex(text string) int {
	at := -1
	for _, m := range deathMarks {
		if i := strings.Index(text, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

// fatalLine is the line that says why a child died, with the runtime's
// "fatal error:" line when that follows ("unexpected fault address ...;
// fatal error: fault").
func fatalLine(text string) string {
	i := deathIndex(text)
	if i < 0 {
		return ""
	}
	lines := strings.SplitN(text[i:], "\n", 3)
	line := lines[0]
	if len(lines) > 1 && !strings.HasPrefix(line, "fatal error: ") && strings.HasPrefix(lines[1], "fatal error: ") {
		line += "; " + lines[1]
	}
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}

// excerpt is what to show of a failed child's output: the lines that say
// why it died and the stacks of the goroutines that were in gosr's code
// (a hang's SIGQUIT dump lists the runtime's own goroutines too); the
// last lines when it did not say.
func excerpt(text string, tail string) string {
	i := deathIndex(text)
	if i < 0 {
		return tail
	}
	// The runtime prints a line or two before "fatal error:" ("runtime:
	// goroutine stack exceeds ...").
	for k := 0; k < 3 && i > 0; k++ {
		i = strings.LastIndexByte(text[:i-1], '\n') + 1
	}
	var out []string
	blocks := strings.Split(text[i:], "\n\n")
	out = append(out, cutLines(blocks[0], 12))
	kept := 0
	for _, b := range blocks[1:] {
		if kept < 3 && strings.HasPrefix(b, "goroutine ") && strings.Contains(b, "github.com/gosr/") {
			out = append(out, cutLines(b, 30))
			kept++
		}
	}
	return strings.Join(out, "\n\n")
}

func cutLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "\t...")
	}
	for i, l := range lines {
		if len(l) > 500 {
			lines[i] = l[:500] + "..."
		}
	}
	return strings.Join(lines, "\n")
}

// capture keeps the head and the tail of what a child writes, however much
// (a panic that prints a hostile value whole may write gigabytes).
type capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte // a window of the last limit bytes
	total int64
}

func newCapture(limit int) *capture { return &capture{limit: limit} }

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.limit - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*c.limit {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.limit:]...)
		}
	}
	return n, nil
}

// String is the head, a mark of what was left out, and the tail.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.limit {
		tail = tail[len(tail)-c.limit:]
	}
	if left := c.total - int64(len(c.head)) - int64(len(tail)); left > 0 {
		return string(c.head) + fmt.Sprintf("\n[... %d bytes left out ...]\n", left) + string(tail)
	}
	return string(c.head) + string(tail)
}

// Tail is the last n lines, each cut to 500 bytes.
func (c *capture) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(c.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 500 {
			lines[i] = l[:500] + "..."
		}
	}
	return strings.Join(lines, "\n")
}

// Counts tallies results by outcome.
func Counts(rs []Result) map[Outcome]int {
	m := map[Outcome]int{}
	for _, r := range rs {
		m[r.Outcome]++
	}
	return m
}

var outcomeOrder = []Outcome{OKError, OKSuccess, Wrong, Fatal, Hang, OOM}

// WriteMarkdown writes the results as a table, with the totals by outcome.
func WriteMarkdown(w io.Writer, rs []Result) error {
	var b bytes.Buffer
	n := Counts(rs)
	fmt.Fprintf(&b, "%d cases:", len(rs))
	for _, o := range outcomeOrder {
		fmt.Fprintf(&b, " %s %d,", o, n[o])
	}
	if n[NotRun] > 0 {
		fmt.Fprintf(&b, " %s %d,", NotRun, n[NotRun])
	}
	b.Truncate(b.Len() - 1)
	b.WriteString("\n\n| case | class | outcome | seconds | CPU seconds | peak RSS (MiB) | message |\n|---|---|---|---:|---:|---:|---|\n")
	for _, r := range rs {
		msg := r.Message
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		msg = strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(msg)
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.2f | %d | %s |\n", r.Name, r.Class, r.Outcome, r.Seconds, r.CPU, r.MaxRSS>>20, msg)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteReport writes the results to path: JSON when it ends in .json,
// else the markdown table.
func WriteReport(path string, rs []Result) error {
	var b bytes.Buffer
	if strings.HasSuffix(path, ".json") {
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Counts map[Outcome]int `json:"counts"`
			Cases  []Result        `json:"cases"`
		}{Counts(rs), rs}); err != nil {
			return err
		}
	} else if err := WriteMarkdown(&b, rs); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
