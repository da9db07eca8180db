package staticruntime_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// Vision models (torchvision resnet18 and mobilenet_v2, a small CNN with
// TorchScript control flow), as PyTorch's frozen optimised graphs and as
// frozen but unoptimised ones (batch_norm, in-place ops, leftover checks),
// scripted and traced. The fixtures are too big for the repository: they
// are made by scripts/make_vision_ir.py into a cache directory, when a
// Python with torch and torchvision is at hand.

var visionScripts = []string{"make_vision_ir.py", "fixture_lib.py", "st_io.py"}

var (
	visionOnce  sync.Once
	visionDir   string
	visionError string // why the fixtures are not available (a skip)
)

// visionCases returns the vision fixtures, making them on first use, or
// skips the test when they cannot be made.
func visionCases(t testing.TB) []*fixture.Case {
	t.Helper()
	if testing.Short() {
		t.Skip("vision models are slow")
	}
	visionOnce.Do(makeVisionFixtures)
	if visionError != "" {
		t.Skip(visionError)
	}
	cases, err := fixture.LoadDir(visionDir)
	require.NoError(t, err)
	return cases
}

// makeVisionFixtures fills ptfixture.CacheRoot()'s vision-<hash of the
// scripts>, unless an earlier run did.
func makeVisionFixtures() {
	h := sha256.New()
	for _, s := range visionScripts {
		b, err := os.ReadFile(filepath.Join("..", "scripts", s))
		if err != nil {
			visionError = "vision fixtures: " + err.Error()
			return
		}
		h.Write(b)
	}
	dir := filepath.Join(ptfixture.CacheRoot(), "vision-"+hex.EncodeToString(h.Sum(nil))[:16])
	visionDir = dir
	done := filepath.Join(dir, "DONE")
	if _, err := os.Stat(done); err == nil {
		return
	}
	py, err := ptfixture.FindPython("torch", "torchvision")
	if err != nil {
		visionError = "vision fixtures: " + err.Error()
		return
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "make_vision_ir.py"))
	if err != nil {
		visionError = err.Error()
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		visionError = "vision fixtures: " + err.Error()
		return
	}
	out, err := exec.Command(py, script, dir).CombinedOutput()
	if err != nil {
		visionError = "vision fixtures: " + script + ": " + err.Error() + "\n" + string(out)
		return
	}
	_ = os.WriteFile(done, out, 0o644)
}

func loadVision(t testing.TB, c *fixture.Case) *staticruntime.StaticModule {
	t.Helper()
	g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
	require.NoError(t, err, "parse %s", c.Name)
	m, err := staticruntime.NewStaticModule(g, nil)
	require.NoError(t, err, "prepare %s", c.Name)
	return m
}

// TestVisionModelsMatchPyTorch runs every vision graph twice on one
// runtime: both runs match PyTorch, and every node gets an out variant or
// a native kernel (no fallbacks).
func TestVisionModelsMatchPyTorch(t *testing.T) {
	for _, c := range visionCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			m := loadVision(t, c)
			_, _, fallback := m.KindCounts()
			assert.Zero(t, fallback, "nodes without an out variant or native kernel")
			if strings.HasPrefix(c.Name, "resnet18") || strings.HasPrefix(c.Name, "mobilenet_v2") {
				// Folding and mutation removal leave plain functional
				// convolutions and activations, as PyTorch's frozen graph;
				// then FuseConvAdd folds a residual add, and the relu
				// that alone reads the sum, into the convolution before
				// it (resnet's blocks, mobilenet_v2's inverted
				// residuals), FuseConvClamp the relu or relu6 that alone
				// reads a convolution, and UseInplaceActivations runs any
				// other activation in its input's memory. With AVX-512,
				// UseBlockedLayout then keeps resnet's chain of fused
				// convolutions blocked (gosr::conv_nchwc, the residual
				// its other input).
				fused, fusedAdd := 0, 0
				for _, n := range m.Graph().Block.Nodes {
					if n.Kind == "gosr::conv_nchwc" {
						if v, ok := graph.ConstantValue(n.Inputs[7]); !ok || !v.IsNone() {
							fusedAdd++
						}
					}
				}
				for _, ni := range m.Nodes() {
					assert.NotEqual(t, "aten::batch_norm", ni.Op, "batch_norm not folded: %s", ni.Node)
					assert.NotEqual(t, "aten::add", ni.Op, "residual add not fused: %s", ni.Node)
					switch ni.Op {
					case "aten::relu_", "aten::hardtanh_":
						continue
					case "gosr::conv_clamp", "gosr::conv_nchwc":
						fused++
					case "gosr::conv_add_clamp":
						fusedAdd++
					}
					assert.False(t, strings.HasSuffix(ni.Op, "_") && !strings.HasSuffix(ni.Op, "__"), "in-place op left: %s", ni.Node)
				}
				assert.Positive(t, fused, "convolutions with their activations")
				assert.Positive(t, fusedAdd, "convolutions with their residual adds")
			}
			r := m.NewRuntime()
			outs, err := r.Run(c.Inputs...)
			require.NoError(t, err)
			compareModel(t, c, outs, "first run")
			first := make([]ivalue.IValue, len(outs))
			for i, o := range outs {
				first[i] = o.Clone()
			}
			outs, err = r.Run(c.Inputs...)
			require.NoError(t, err)
			compareModel(t, c, outs, "second run")
			assert.Zero(t, fixture.MaxAbsDiff(fixture.Flatten(outs), fixture.Flatten(first)), "second run differs from the first")
		})
	}
}

// TestVisionSteadyRunAllocsNothing: after warm-up, a Run allocates
// nothing, in-place ops and control flow included. The unoptimised graphs
// hold every op of the optimised ones, so only they are measured.
func TestVisionSteadyRunAllocsNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	for _, c := range visionCases(t) {
		if !strings.HasSuffix(c.Name, "_unopt") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			r := loadVision(t, c).NewRuntime()
			for i := 0; i < 2; i++ {
				_, err := r.Run(c.Inputs...)
				require.NoError(t, err)
			}
			var runErr error
			allocs := testing.AllocsPerRun(2, func() {
				if _, err := r.Run(c.Inputs...); err != nil {
					runErr = err
				}
			})
			require.NoError(t, runErr)
			assert.Zero(t, allocs, "allocations per steady Run of %s", c.Name)
		})
	}
}

// BenchmarkVision times a steady Run of every vision graph.
func BenchmarkVision(b *testing.B) {
	for _, c := range visionCases(b) {
		b.Run(c.Name, func(b *testing.B) {
			r := loadVision(b, c).NewRuntime()
			for i := 0; i < 2; i++ {
				_, err := r.Run(c.Inputs...)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(c.Inputs...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
