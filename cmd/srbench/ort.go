package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gosr/gosr/internal/ort"
	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
)

// compare's -ort values.
const (
	ortAuto = "auto" // ONNX Runtime's column where its library is found
	ortOn   = "on"   // required: compare fails without the library
	ortOff  = "off"
)

// ortOpset is the ONNX opset PyTorch's child exports with.
const ortOpset = 14

// ortLibDirs are where ONNX Runtime's library is looked for when
// GOSR_ORT_LIB is unset: beside the executable, npm's install of
// onnxruntime-node in the working directory, its parents and the home
// directory, and the usual library directories.
func ortLibCandidates() []string {
	const npmDir = "node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
	var out []string
	if exe, err := os.Executable(); err == nil {
		out = append(out, filepath.Join(filepath.Dir(exe), "libonnxruntime.so.1"))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			out = append(out, filepath.Join(d, npmDir, "libonnxruntime.so.1"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, npmDir, "libonnxruntime.so.1"))
	}
	for _, d := range []string{"/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"} {
		out = append(out, filepath.Join(d, "libonnxruntime.so.1"), filepath.Join(d, "libonnxruntime.so"))
	}
	return out
}

// ortLibrary is ONNX Runtime's library: $GOSR_ORT_LIB, else the first of
// ortLibCandidates that exists ("" when none; the error says where it
// looked).
func ortLibrary() (string, error) {
	if p := os.Getenv(envORTLib); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", envORTLib, p, ort.ErrNoLibrary)
		}
		return p, nil
	}
	c := ortLibCandidates()
	for _, p := range c {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no libonnxruntime.so.1 in %d places (beside srbench, node_modules/onnxruntime-node of the working directory, its parents and home, /usr/local/lib, /usr/lib); %s", ort.ErrNoLibrary, len(c), ort.InstallHint)
}

// openORT resolves -ort: the library's path and version, or "" when ONNX
// Runtime is off (or auto and not found: why goes in note).
func (f *compareFlags) openORT() (lib string, info ort.Info, note string, err error) {
	switch f.ort {
	case ortOff:
		return "", info, "", nil
	case ortAuto, ortOn:
	default:
		return "", info, "", fmt.Errorf("-ort %q: want auto, on or off", f.ort)
	}
	lib, err = ortLibrary()
	if err == nil {
		info, err = ort.Available(lib)
	}
	if err != nil {
		if f.ort == ortOn {
			return "", info, "", fmt.Errorf("-ort on: %w", err)
		}
		return "", info, err.Error(), nil
	}
	return lib, info, "", nil
}

// ortSide is ONNX Runtime's side of one model: the ONNX file PyTorch's
// child exported, timed with gosr's inputs and checked against PyTorch's
// outputs.
type ortSide struct {
	us   float64
	diff float64
	// agree: within compare's 1e-4 of PyTorch's outputs.
	agree bool
	note  string
	// profile is -ort-profile's file for the model ("": none).
	profile string
	// paired is the median of gosr's time over ONNX Runtime's in
	// alternating rounds (0: not measured).
	paired float64
}

// [Paired rounds]
//
// This machine's speed moves by 10-30% from one minute to the next, and
// compare times gosr, then PyTorch, then ONNX Runtime, tens of seconds
// apart: a row's gosr/ORT mixes two phases of the machine. So after its
// own timing, ONNX Runtime runs pairedRounds rounds alternating with
// gosr (a runtime of its own, warm), each round timing the same number
// of runs of each, and the row's paired ratio is the median of the
// rounds' gosr/ORT: both sides of each ratio saw the same minute.

// pairedRounds is how many alternating rounds make the paired ratio.
const pairedRounds = 5

// timeORT times onnxPath with ONNX Runtime on m's tensor inputs, as
// measure times gosr (warm-up runs, then -repeats timed loops of -iters
// runs, or about 0.2 s worth; the median), and compares its outputs with
// want (PyTorch's).
func timeORT(lib, onnxPath string, m *model, f compareFlags, want []*ivalue.Tensor, gosrRound func(iters int) (float64, error)) (*ortSide, error) {
	s, err := ort.NewSession(onnxPath, ort.Options{Library: lib, IntraOpThreads: f.intraOpThreads()})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// torch.onnx.export keeps the tensor inputs, in order; scalars and
	// lists become constants.
	var in []*ivalue.Tensor
	for _, v := range m.Inputs {
		if v.Kind() == ivalue.KindTensor {
			in = append(in, v.Tensor())
		}
	}
	if len(in) != len(s.Inputs()) {
		return nil, fmt.Errorf("the ONNX export takes %d inputs %v; the model has %d tensor inputs", len(s.Inputs()), s.Inputs(), len(in))
	}
	c, err := s.Bind(nil, in)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Run(); err != nil {
		return nil, err
	}
	got, err := c.Outputs()
	if err != nil {
		return nil, err
	}
	side := &ortSide{diff: -1}
	if len(want) > 0 {
		if len(got) != len(want) {
			side.note = fmt.Sprintf("ONNX Runtime returned %d outputs, PyTorch %d", len(got), len(want))
		} else {
			side.diff = reference.MaxAbsDiff(got, want)
			side.agree = agree(got, want)
		}
	}
	for range max(f.warmup, 1) {
		if err := c.Run(); err != nil {
			return nil, err
		}
	}
	iters := f.iters
	if iters <= 0 { // as measure: about 0.2 s per repeat
		t0 := time.Now()
		n := 0
		for time.Since(t0) < 20*time.Millisecond {
			if err := c.Run(); err != nil {
				return nil, err
			}
			n++
		}
		iters = max(10, n*10)
	}
	per := make([]float64, 0, max(f.repeats, 1))
	for range max(f.repeats, 1) {
		t0 := time.Now()
		for range iters {
			if err := c.Run(); err != nil {
				return nil, err
			}
		}
		per = append(per, float64(time.Since(t0).Nanoseconds())/1e3/float64(iters))
	}
	side.us = stats.Median(per)
	if gosrRound != nil {
		// See [Paired rounds].
		ratios := make([]float64, 0, pairedRounds)
		for range pairedRounds {
			g, err := gosrRound(iters)
			if err != nil {
				return nil, err
			}
			t0 := time.Now()
			for range iters {
				if err := c.Run(); err != nil {
					return nil, err
				}
			}
			o := float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(iters)
			ratios = append(ratios, g/o)
		}
		side.paired = stats.Median(ratios)
	}
	if f.ortProfile != "" {
		if side.profile, err = profileORT(lib, onnxPath, in, f, filepath.Join(f.ortProfile, modelFileName(m.Name)+"_ort")); err != nil {
			return nil, err
		}
	}
	return side, nil
}

// ortProfileRuns is how many runs -ort-profile records, after as many
// warm-up runs as the timing had.
const ortProfileRuns = 20

// profileORT runs onnxPath in a session of its own with ONNX Runtime's
// profiler on and returns the profile's path (ONNX Runtime adds a time
// stamp to prefix).
func profileORT(lib, onnxPath string, in []*ivalue.Tensor, f compareFlags, prefix string) (string, error) {
	before, _ := filepath.Glob(prefix + "*.json")
	s, err := ort.NewSession(onnxPath, ort.Options{Library: lib, IntraOpThreads: f.intraOpThreads(), ProfilePrefix: prefix})
	if err != nil {
		return "", err
	}
	c, err := s.Bind(nil, in)
	if err != nil {
		s.Close()
		return "", err
	}
	for range max(f.warmup, 1) + ortProfileRuns {
		if err = c.Run(); err != nil {
			break
		}
	}
	c.Close()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	after, _ := filepath.Glob(prefix + "*.json")
	for _, p := range after {
		if !slices.Contains(before, p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("ONNX Runtime wrote no profile under %s*.json", prefix)
}

// modelFileName is a model's name as a file name: its base, without
// its directories and extension.
func modelFileName(name string) string {
	return strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
}

// applyORT fills cr's ONNX Runtime columns from o (nil: its note).
func (cr *compareResult) applyORT(o *ortSide, err error) {
	if err != nil {
		cr.ORTNote = "ONNX Runtime failed: " + err.Error()
		if errors.Is(err, ort.ErrNoLibrary) {
			cr.ORTNote = err.Error()
		}
		return
	}
	if o == nil {
		return
	}
	cr.ORTUs, cr.ORTNote, cr.ORTProfile, cr.GosrOverORTPaired = o.us, o.note, o.profile, o.paired
	if o.diff >= 0 {
		d := o.diff
		cr.ORTDiff, cr.ORTAgree = &d, &o.agree
	}
	cr.ORTGFLOPs = gflops(cr.FLOPs, o.us)
	if o.us > 0 && cr.GosrUs > 0 {
		cr.GosrOverORT = cr.GosrUs / o.us
	}
}
