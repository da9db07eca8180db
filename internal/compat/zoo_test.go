package compat_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// zooGaps are the compatibility suite's archives gosr cannot run yet
// ("model" for all its variants, or "model.variant"), each with a part of
// the error it gives today. TestZooMatchesPyTorch checks that each still
// fails so (its error names what is missing) and fails once one passes,
// so that this table is the current state; docs/compatibility.md is made
// from the same run.
var zooGaps = map[string]string{
	// The detection models load, run and match, but their post-processing
	// (per-image, per-level loops building lists of boxes, scores, labels)
	// makes new lists every run: 118 to 298 allocations.
	"fasterrcnn_mobilenet_v3_large_320_fpn": "allocations per steady run",
	"fasterrcnn_resnet50_fpn":               "allocations per steady run",
	"maskrcnn_resnet50_fpn":                 "allocations per steady run",
	"retinanet_resnet50_fpn":                "allocations per steady run",
	"ssdlite320_mobilenet_v3_large":         "allocations per steady run",
	"ssd300_vgg16":                          "allocations per steady run",
}

// zooReport is where TestZooMatchesPyTorch writes each archive's result,
// for scripts/zoo_table.py (docs/compatibility.md).
var zooReport = flag.String("zoo-report", "", "write the compatibility suite's results as JSON to this file")

// zooRow is one archive's result in the report.
type zooRow struct {
	Model   string `json:"model"`
	Variant string `json:"variant"`
	Family  string `json:"family"`
	Stage   string `json:"stage,omitempty"` // where it failed; empty when it loads, matches and allocates nothing
	Error   string `json:"error,omitempty"`
}

// zooError says at which stage an archive failed.
type zooError struct {
	stage string // load, prepare, run, match, allocate
	err   error
}

func (e *zooError) Error() string { return e.stage + ": " + e.err.Error() }

// runZooCase loads c with the default options (Go kernels only), runs it
// twice on its inputs, compares both runs with PyTorch's output and
// counts a third run's allocations.
func runZooCase(c ptfixture.Case) (err error) {
	fail := func(stage string, err error) error { return &zooError{stage, err} }
	m, err := loaders.Load(c.Path)
	if err != nil {
		return fail("load", err)
	}
	defer m.Close()
	in, err := loaders.ReadTorchSave(c.Inputs)
	if err != nil {
		return fail("inputs", err)
	}
	want, err := loaders.ReadTorchSave(c.Expected)
	if err != nil {
		return fail("expected", err)
	}
	var calls []string
	m.Graph.Walk(func(n *graph.Node) {
		if strings.HasPrefix(n.Kind, "gosr::") {
			calls = append(calls, n.Kind)
		}
	})
	if len(calls) > 0 {
		return fail("load", fmt.Errorf("the graph has fallback nodes %v", calls))
	}
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	if err != nil {
		return fail("prepare", err)
	}
	if _, _, fb := sm.KindCounts(); fb > 0 {
		return fail("prepare", fmt.Errorf("%d nodes run as fallbacks (allocating every run)", fb))
	}
	r := sm.NewRuntime()
	args := in.List().Items
	for run := 0; run < 2; run++ { // the second run uses the planned memory
		out, err := r.Run(args...)
		if err != nil {
			return fail("run", err)
		}
		if err := zooMatch(out, want, c.TolScale); err != nil {
			return fail("match", fmt.Errorf("run %d: %w", run, err))
		}
	}
	if !raceflag.Enabled {
		if a := testing.AllocsPerRun(1, func() { r.Run(args...) }); a != 0 {
			return fail("allocate", fmt.Errorf("%v allocations per steady run, want 0", a))
		}
	}
	return nil
}

// zooMatch compares gosr's outputs with PyTorch's value: the same
// structure (tuples, lists, dicts with their keys, None) and every tensor
// within scale times the largest magnitude of the expected tensor.
func zooMatch(out []ivalue.IValue, want ivalue.IValue, scale float64) error {
	got := ivalue.NewTuple(out...)
	if len(out) == 1 {
		got = out[0]
	}
	var walk func(path string, g, w ivalue.IValue) error
	walk = func(path string, g, w ivalue.IValue) error {
		switch w.Kind() {
		case ivalue.KindTensor:
			if !g.IsTensor() {
				return fmt.Errorf("%s: got %s, want a tensor", path, g.Kind())
			}
			wt := w.Tensor()
			top := 0.0
			if wt.DType().IsFloat() {
				for _, x := range wt.Float64s() {
					top = max(top, math.Abs(x))
				}
			}
			if err := fixture.Compare(g.Tensor(), wt, 0, scale*top); err != nil {
				return fmt.Errorf("%s (tolerance %.3g = %g of the largest magnitude %.4g): %w", path, scale*top, scale, top, err)
			}
			return nil
		case ivalue.KindNone:
			if g.Kind() != ivalue.KindNone {
				return fmt.Errorf("%s: got %s, want None", path, g.Kind())
			}
			return nil
		case ivalue.KindTuple, ivalue.KindList:
			if g.Kind() != ivalue.KindTuple && g.Kind() != ivalue.KindList {
				return fmt.Errorf("%s: got %s, want a %s", path, g.Kind(), w.Kind())
			}
			gi, wi := g.List().Items, w.List().Items
			if len(gi) != len(wi) {
				return fmt.Errorf("%s: %d elements, want %d", path, len(gi), len(wi))
			}
			for i := range wi {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), gi[i], wi[i]); err != nil {
					return err
				}
			}
			return nil
		case ivalue.KindDict:
			if g.Kind() != ivalue.KindDict {
				return fmt.Errorf("%s: got %s, want a dict", path, g.Kind())
			}
			gd, wd := g.Dict(), w.Dict()
			if len(gd.Keys) != len(wd.Keys) {
				return fmt.Errorf("%s: %d keys, want %d", path, len(gd.Keys), len(wd.Keys))
			}
			for i, k := range wd.Keys {
				gv, ok := gd.Get(k)
				if !ok {
					return fmt.Errorf("%s: no key %v", path, k)
				}
				if err := walk(fmt.Sprintf("%s[%v]", path, k), gv, wd.Values[i]); err != nil {
					return err
				}
			}
			return nil
		}
		return fmt.Errorf("%s: expected value of kind %s is not compared", path, w.Kind())
	}
	return walk("output", got, want)
}

// TestZooMatchesPyTorch runs every archive of the compatibility suite
// (scripts/make_zoo.py) with gosr's Go kernels: it must load with no
// fallback node, match PyTorch's eager output within 1e-4 of each output's
// largest magnitude on two runs, and allocate nothing on a third; or be
// one of zooGaps, failing as that says.
func TestZooMatchesPyTorch(t *testing.T) {
	dir := ptfixture.ZooDir(t)
	cases, err := ptfixture.Manifest(dir)
	require.NoError(t, err)
	skipped, err := ptfixture.ManifestSkipped(dir)
	require.NoError(t, err)
	// Variants PyTorch itself cannot make or run the same as eager (a
	// trace of a List[Dict] output; freezing's folding moving a detection
	// model's boxes) are left out by the generator, which says why; a
	// model it could not make at all would hide from this test.
	for _, s := range skipped {
		assert.NotEqual(t, "*", s.Variant, "%s: the generator made nothing: %s", s.Model, s.Why)
		t.Logf("not made by PyTorch: %s.%s: %s", s.Model, s.Variant, s.Why)
	}
	families := map[string][2]int{} // family -> (passed, archives)
	var gaps []string
	var rows []zooRow
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			err := runZooCase(c)
			row := zooRow{Model: c.Model, Variant: c.Variant, Family: c.Family}
			var ze *zooError
			if errors.As(err, &ze) {
				row.Stage, row.Error = ze.stage, ze.err.Error()
			} else if err != nil {
				row.Stage, row.Error = "?", err.Error()
			}
			rows = append(rows, row)
			f := families[c.Family]
			f[1]++
			if err == nil {
				f[0]++
			}
			families[c.Family] = f
			gap, known := zooGaps[c.Name()]
			if !known {
				gap, known = zooGaps[c.Model]
			}
			if !known {
				require.NoError(t, err)
				return
			}
			if err == nil {
				t.Errorf("%s now loads and matches PyTorch: remove it from zooGaps", c.Name())
				return
			}
			require.Contains(t, err.Error(), gap, "%s fails otherwise than zooGaps says", c.Name())
			gaps = append(gaps, fmt.Sprintf("%s: %s", c.Name(), err))
		})
	}
	names := make([]string, 0, len(families))
	total, passed := 0, 0
	for f, n := range families {
		names = append(names, fmt.Sprintf("%s %d/%d", f, n[0], n[1]))
		passed += n[0]
		total += n[1]
	}
	sort.Strings(names)
	t.Logf("compatibility suite: %d/%d archives load and match (%s)", passed, total, strings.Join(names, ", "))
	for _, g := range gaps {
		t.Logf("gap: %s", g)
	}
	if *zooReport != "" {
		b, err := json.MarshalIndent(rows, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*zooReport, append(b, '\n'), 0o644))
	}
}
