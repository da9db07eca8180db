package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ort"
	"github.com/gosr/gosr/internal/ptfixture"
)

func TestORTFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		err  string
	}{
		{[]string{"m.pt"}, ortAuto, ""},
		{[]string{"-ort", "off", "m.pt"}, ortOff, ""},
		{[]string{"-ort", "on", "m.pt"}, ortOn, ""},
		{[]string{"-ort", "maybe", "m.pt"}, "", `-ort "maybe": want auto, on or off`},
	} {
		c := newCommand("compare")
		err := parse("compare", c, tc.args, io.Discard)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, c.(*compareFlags).ort, "%v", tc.args)
	}
}

// A library that is not there: -ort on fails before any model, auto goes
// on without ONNX Runtime and says why, off does not look.
func TestORTMissing(t *testing.T) {
	t.Setenv(envORTLib, "/nonexistent/libonnxruntime.so.1")
	_, err := ortLibrary()
	require.ErrorIs(t, err, ort.ErrNoLibrary)
	assert.ErrorContains(t, err, "GOSR_ORT_LIB=/nonexistent/libonnxruntime.so.1")

	_, _, _, err = (&compareFlags{ort: ortOn}).openORT()
	assert.ErrorContains(t, err, "-ort on: GOSR_ORT_LIB=/nonexistent")
	var out bytes.Buffer
	err = (&compareFlags{ort: ortOn, modelFlags: modelFlags{model: "mlp"}}).run(&out)
	assert.ErrorContains(t, err, "-ort on")
	assert.Empty(t, out.String(), "nothing timed")

	lib, _, note, err := (&compareFlags{ort: ortAuto}).openORT()
	require.NoError(t, err)
	assert.Empty(t, lib)
	assert.Contains(t, note, "GOSR_ORT_LIB=/nonexistent")
	lib, _, note, err = (&compareFlags{ort: ortOff}).openORT()
	require.NoError(t, err)
	assert.Empty(t, lib)
	assert.Empty(t, note)
}

// requireORTLib skips without ONNX Runtime's library ($GOSR_ORT_LIB) or
// PyTorch (which exports the ONNX files), unless GOSR_REQUIRE_ORT is set.
func requireORTLib(t *testing.T) string {
	t.Helper()
	_, required := os.LookupEnv("GOSR_REQUIRE_ORT")
	lib, err := ortLibrary()
	if err != nil {
		if required {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if findPython("") == "" {
		if required {
			t.Fatal("GOSR_REQUIRE_ORT is set but no python3 imports torch")
		}
		t.Skip("no python3 with torch to export ONNX files")
	}
	return lib
}

// ortCompareFlags are compare's flags for the ONNX Runtime tests: the
// mlp, quick timing, JSON, -ort on, and -ort-profile profile.
func ortCompareFlags(profile string) compareFlags {
	f := compareFlags{benchFlags: quick(runtimeFlags{}), json: true, ort: ortOn, ortProfile: profile, ptTimeout: defaultPTTimeout}
	f.model = "mlp"
	return f
}

// compareORTRow runs compare with ortCompareFlags(profile) and returns
// its one row.
func compareORTRow(t *testing.T, profile string) compareResult {
	t.Helper()
	f := ortCompareFlags(profile)
	var out bytes.Buffer
	require.NoError(t, f.run(&out))
	var rows []compareResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows), out.String())
	require.Len(t, rows, 1)
	return rows[0]
}

// compare -ort on times ONNX Runtime on PyTorch's export of the same
// model, an IR fixture and a TorchScript archive, and its outputs match
// PyTorch's.
func TestCompareORT(t *testing.T) {
	requireORTLib(t)
	r := compareORTRow(t, "")
	assert.Empty(t, r.ORTNote)
	assert.Regexp(t, `^1\.\d+\.\d+$`, r.ORTVersion)
	assert.Greater(t, r.ORTUs, 0.0)
	assert.InDelta(t, r.GosrUs/r.ORTUs, r.GosrOverORT, 1e-9)
	// The paired rounds' ratio: both engines timed, within a factor of
	// ten of the unpaired one on the same machine.
	assert.Positive(t, r.GosrOverORTPaired)
	assert.InDelta(t, 1, r.GosrOverORTPaired/r.GosrOverORT, 9, "paired %v, unpaired %v", r.GosrOverORTPaired, r.GosrOverORT)
	require.NotNil(t, r.ORTDiff)
	assert.LessOrEqual(t, *r.ORTDiff, 1e-4)
	require.NotNil(t, r.ORTAgree)
	assert.True(t, *r.ORTAgree)
	// The mlp's linears give the FLOPs; each engine's GFLOP/s is them
	// over its time.
	assert.Positive(t, r.FLOPs)
	assert.InDelta(t, float64(r.FLOPs)/r.GosrUs/1e3, r.GosrGFLOPs, 1e-9)
	assert.InDelta(t, float64(r.FLOPs)/r.ORTUs/1e3, r.ORTGFLOPs, 1e-9)

	f := ortCompareFlags("")
	f.json = false
	f.model = filepath.Join(ptfixture.Committed(), "small_cnn.traced_frozen.pt")
	var out bytes.Buffer
	require.NoError(t, f.run(&out))
	text := out.String()
	assert.Contains(t, text, "ONNX Runtime 1.")
	assert.Contains(t, text, "ORT us")
	assert.Contains(t, text, "gosr/ORT")
	assert.Contains(t, text, "ORT GF/s")
	assert.NotContains(t, text, "ONNX Runtime failed", text)
	assert.NotContains(t, text, "torch.onnx.export failed", text)
}

// compare -ort-profile writes ONNX Runtime's per-node profile of each
// model into the directory, names it in the row, and the file holds the
// profiled runs.
func TestCompareORTProfile(t *testing.T) {
	requireORTLib(t)
	dir := t.TempDir()
	f := ortCompareFlags(dir)
	r := compareORTRow(t, dir)
	p := r.ORTProfile
	require.NotEmpty(t, p, r.ORTNote)
	assert.Equal(t, dir, filepath.Dir(p))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var events []struct{ Cat, Name string }
	require.NoError(t, json.Unmarshal(b, &events))
	runs := 0
	for _, ev := range events {
		if ev.Cat == "Session" && ev.Name == "model_run" {
			runs++
		}
	}
	assert.Equal(t, max(f.warmup, 1)+ortProfileRuns, runs)

	bad := f
	bad.ortProfile = filepath.Join(dir, "missing")
	assert.ErrorContains(t, bad.validate(), "want an existing directory")
}

// twoMHA is a traced, frozen model with two nn.MultiheadAttention layers,
// which PyTorch 1.13's Static Runtime builds but fails to run twice
// ("Cannot access data pointer of Tensor that doesn't have storage", as
// on torchvision's vit_b_16), and whose trace torch.onnx.export cannot
// take (aten::_native_multi_head_attention): NAME.onnx beside it is the
// eager module's export.
const twoMHA = `
import sys, torch, warnings
warnings.simplefilter("ignore")
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.a = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        s.b = torch.nn.MultiheadAttention(16, 2, batch_first=True)
    def forward(s, x):
        y, _ = s.a(x, x, x, need_weights=False)
        x = x + y
        y, _ = s.b(x, x, x, need_weights=False)
        return x + y
m, x, d = M().eval(), torch.randn(1, 5, 16), sys.argv[1]
if len(sys.argv) > 2:
    torch.onnx.export(m, (x,), d + "/mha2.onnx", opset_version=14)
with torch.no_grad():
    t = torch.jit.freeze(torch.jit.trace(m, (x,), check_trace=False))
    torch.save((x,), d + "/mha2.inputs.pt")
    torch.save(m(x), d + "/mha2.expected.pt")
torch.jit.save(t, d + "/mha2.traced_frozen.pt")
`

// A model PyTorch's Static Runtime cannot run: compare still times its
// interpreter, checks gosr against the interpreter's outputs, prints "-"
// for the Static Runtime and says why; with an ONNX file beside the
// archive, ONNX Runtime runs that file.
func TestCompareStaticRuntimeFails(t *testing.T) {
	py := findPython("")
	if py == "" {
		t.Skip("no python3 with torch")
	}
	lib, _ := ortLibrary()
	dir := t.TempDir()
	args := []string{"-c", twoMHA, dir}
	if lib != "" {
		args = append(args, "onnx")
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	require.NoError(t, err, string(out))

	f := compareFlags{benchFlags: quick(runtimeFlags{}), json: true, ort: ortOff, ptTimeout: defaultPTTimeout}
	if lib != "" {
		f.ort = ortOn
	}
	f.model = filepath.Join(dir, "mha2.traced_frozen.pt")
	var b bytes.Buffer
	require.NoError(t, f.run(&b))
	var rows []compareResult
	require.NoError(t, json.Unmarshal(b.Bytes(), &rows), b.String())
	require.Len(t, rows, 1)
	r := rows[0]
	assert.Contains(t, r.TorchSRError, "Cannot access data pointer")
	assert.Zero(t, r.TorchSRUs)
	assert.Zero(t, r.Speedup)
	assert.Positive(t, r.InterpUs)
	assert.Positive(t, r.SpeedupInterp)
	assert.Contains(t, r.Note, "outputs checked against its interpreter")
	assert.True(t, r.Agree, "gosr against PyTorch's interpreter")
	assert.Less(t, r.GosrVsTorch, 1e-5)
	if lib != "" {
		assert.Positive(t, r.ORTUs, r.ORTNote)
		assert.Contains(t, r.ORTNote, "ONNX Runtime ran mha2.onnx, the ONNX file beside the archive")
		require.NotNil(t, r.ORTDiff)
		assert.Less(t, *r.ORTDiff, 1e-5)
	}

	f.json = false
	b.Reset()
	require.NoError(t, f.run(&b))
	assert.Regexp(t, `mha2\.traced_frozen +go +[\d.]+ +\S+ +- +- +[\d.]+ +[\d.]+x`, b.String())
}
