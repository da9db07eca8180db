package ptfixture

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var all = []string{"scripted", "traced", "scripted_frozen", "traced_frozen"}

func TestCommittedManifest(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	byModel := map[string][]string{}
	for _, c := range cases {
		byModel[c.Model] = append(byModel[c.Model], c.Variant)
		assert.False(t, c.Large, c.Name())
		assert.NotEmpty(t, c.Ops, c.Name())
		assert.Greater(t, c.RTol, 0.0, c.Name())
	}
	assert.Equal(t, map[string][]string{
		"mlp":                       all,
		"deep_and_wide":             all,
		"dlrm_like":                 all,
		"transformer_block":         all,
		"transformer_encoder_layer": {"traced", "traced_frozen"},
		"fork_ensemble":             all,
		"fork_cnn":                  all,
		"fork_nested":               all,
		"fork_loop":                 all,
		"control_flow":              all,
		"small_cnn":                 all,
		"se_block":                  all,
		"text_classifier":           all,
	}, byModel)
}

// What PyTorch did to each model, as recorded: the fixtures test what they
// claim to test.
func TestCommittedOps(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	ops := map[string][]string{}
	for _, c := range cases {
		ops[c.Name()] = c.Ops
	}
	tests := []struct {
		name        string
		has, hasNot []string
	}{
		{"control_flow.scripted", []string{"prim::Loop", "prim::If", "aten::append", "aten::cat"}, nil},
		{"control_flow.scripted_frozen", []string{"prim::Loop", "prim::If"}, []string{"prim::GetAttr"}},
		{"control_flow.traced", []string{"aten::cat"}, []string{"prim::Loop", "prim::If"}},
		{"mlp.scripted", []string{"prim::GetAttr", "aten::linear"}, nil},
		{"mlp.traced_frozen", []string{"aten::linear", "aten::relu"}, []string{"prim::GetAttr"}},
		{"deep_and_wide.scripted_frozen", []string{"aten::bmm", "aten::clamp", "aten::sigmoid"}, nil},
		{"dlrm_like.traced_frozen", []string{"aten::embedding_bag", "aten::index", "aten::bmm"}, nil},
		{"small_cnn.scripted", []string{"aten::batch_norm", "aten::conv2d"}, nil},
		{"small_cnn.scripted_frozen", []string{"aten::conv2d"}, []string{"aten::batch_norm"}}, // folded
		{"small_cnn.traced", []string{"aten::_convolution"}, nil},
		{"transformer_encoder_layer.traced", []string{"aten::softmax", "aten::layer_norm"},
			[]string{"aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention"}},
		// The forks are real prim::fork nodes (ops lists walk their
		// subgraphs): neither scripting, tracing nor freezing inlines them.
		{"fork_ensemble.traced_frozen", []string{"prim::fork", "aten::wait", "aten::linear", "aten::tanh"}, nil},
		{"fork_cnn.scripted_frozen", []string{"prim::fork", "aten::wait", "aten::conv2d", "aten::max_pool2d"},
			[]string{"prim::GetAttr"}},
		{"fork_cnn.traced_frozen", []string{"prim::fork", "aten::wait", "aten::_convolution", "aten::max_pool2d"}, nil},
		{"fork_nested.scripted_frozen", []string{"prim::fork", "aten::wait", "aten::cat", "aten::tanh"},
			[]string{"prim::GetAttr"}},
		{"fork_nested.traced_frozen", []string{"prim::fork", "aten::wait", "aten::cat"}, nil},
		// Scripted, the waits run in a prim::Loop over a list of futures;
		// traced, the Python loops are unrolled.
		{"fork_loop.scripted_frozen", []string{"prim::fork", "aten::wait", "prim::Loop", "aten::append", "aten::__getitem__"}, nil},
		{"fork_loop.traced_frozen", []string{"prim::fork", "aten::wait", "aten::stack"}, []string{"prim::Loop"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ops[tc.name]
			require.True(t, ok, "no case %s", tc.name)
			for _, op := range tc.has {
				assert.Contains(t, got, op)
			}
			for _, op := range tc.hasNot {
				assert.NotContains(t, got, op)
			}
		})
	}
}

func TestCommittedUpToDate(t *testing.T) {
	want, err := GeneratorSHA256()
	require.NoError(t, err)
	got, err := ManifestGenerator(Committed())
	require.NoError(t, err)
	assert.Equal(t, want, got, "testdata/pt is older than scripts/make_pt_testdata.py or pt_models.py: run `make testdata`")
}

func TestCommittedSize(t *testing.T) {
	var total int64
	err := filepath.Walk(Committed(), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
		}
		return err
	})
	require.NoError(t, err)
	assert.Less(t, total, int64(3<<20), "testdata/pt should stay small")
}

// Every archive is a zip whose records sit under one folder named after
// the file, as torch.jit.save and torch.save write them.
func TestCommittedArchives(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	for _, c := range cases {
		for _, p := range []string{c.Path, c.Inputs, c.Expected} {
			z, err := zip.OpenReader(p)
			require.NoError(t, err, p)
			prefix := strings.TrimSuffix(filepath.Base(p), ".pt") + "/"
			names := map[string]bool{}
			for _, f := range z.File {
				assert.True(t, strings.HasPrefix(f.Name, prefix), "%s: %s", p, f.Name)
				names[strings.TrimPrefix(f.Name, prefix)] = true
			}
			assert.True(t, names["data.pkl"], "%s has no data.pkl", p)
			if p == c.Path {
				assert.True(t, names["constants.pkl"], "%s has no constants.pkl", p)
			}
			z.Close()
		}
	}
}

func TestManifestErrors(t *testing.T) {
	const good = `{"model":"m","variant":"traced","path":"m.traced.pt","inputs":"m.inputs.pt","expected":"m.expected.pt","rtol":1e-4,"atol":1e-5`
	tests := []struct {
		name     string
		manifest string // "" writes none
		err      string
	}{
		{"missing", "", "manifest.json: missing"},
		{"not json", "{", "not the manifest JSON"},
		{"no cases", `{"cases":[]}`, "no cases"},
		{"ok", `{"cases":[` + good + `}]}`, ""},
		{"unknown variant", `{"cases":[` + strings.Replace(good, `"traced"`, `"onnx"`, 1) + `}]}`, `case 0 (m.onnx): variant "onnx"`},
		{"twice", `{"cases":[` + good + `},` + good + `}]}`, "case 1 (m.traced): listed twice"},
		{"no path", `{"cases":[` + strings.Replace(good, `"m.traced.pt"`, `""`, 1) + `}]}`, "must all be set"},
		{"no tolerance", `{"cases":[{"model":"m","variant":"traced","path":"m.traced.pt","inputs":"m.inputs.pt","expected":"m.expected.pt"}]}`, "rtol and atol"},
		{"negative tolerance", `{"cases":[` + strings.Replace(good, `1e-4`, `-1`, 1) + `}]}`, "rtol and atol"},
		{"outside dir", `{"cases":[` + strings.Replace(good, `"m.traced.pt"`, `"../m.traced.pt"`, 1) + `}]}`, `path "../m.traced.pt" must be a file name inside`},
		{"absent file", `{"cases":[` + strings.Replace(good, `"m.expected.pt"`, `"gone.pt"`, 1) + `}]}`, "expected: stat"},
		{"figures and shapes", `{"cases":[` + good + `,"pt_managed_bytes":1024,"pt_managed_tensors":4,"pt_unmanaged_peak_bytes":512,"pt_peak_bytes":1536,"shapes":"m.shapes.pt","shape_batches":[1,4,1]}]}`, ""},
		{"negative figure", `{"cases":[` + good + `,"pt_managed_bytes":-1}]}`, "pt_managed_bytes -1 and pt_managed_tensors 0 must not be negative"},
		{"peak not the sum", `{"cases":[` + good + `,"pt_managed_bytes":1024,"pt_unmanaged_peak_bytes":512,"pt_peak_bytes":1024}]}`, "pt_peak_bytes 1024 must be pt_managed_bytes 1024 + pt_unmanaged_peak_bytes 512"},
		{"peak missing", `{"cases":[` + good + `,"pt_managed_bytes":1024}]}`, "pt_peak_bytes 0 must be pt_managed_bytes 1024 + pt_unmanaged_peak_bytes 0"},
		{"negative peak", `{"cases":[` + good + `,"pt_managed_bytes":1024,"pt_unmanaged_peak_bytes":-64,"pt_peak_bytes":960}]}`, "(not negative)"},
		{"shapes without batches", `{"cases":[` + good + `,"shapes":"m.shapes.pt"}]}`, "go together"},
		{"batches without shapes", `{"cases":[` + good + `,"shape_batches":[1]}]}`, "go together"},
		{"absent shapes", `{"cases":[` + good + `,"shapes":"gone.pt","shape_batches":[1]}]}`, "shapes: stat"},
		{"shapes outside dir", `{"cases":[` + good + `,"shapes":"/m.shapes.pt","shape_batches":[1]}]}`, `shapes "/m.shapes.pt" must be a file name inside`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"m.traced.pt", "m.inputs.pt", "m.expected.pt", "m.shapes.pt"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
			}
			if tc.manifest != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(tc.manifest), 0o644))
			}
			cases, err := Manifest(dir)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, cases, 1)
			assert.Equal(t, filepath.Join(dir, "m.traced.pt"), cases[0].Path)
			assert.Equal(t, 1e-4, cases[0].RTol)
			assert.Equal(t, 1e-5, cases[0].ATol)
			if tc.name == "figures and shapes" {
				assert.Equal(t, int64(1024), cases[0].PTManagedBytes)
				assert.Equal(t, 4, cases[0].PTManagedTensors)
				assert.Equal(t, int64(512), cases[0].PTUnmanagedPeakBytes)
				assert.Equal(t, int64(1536), cases[0].PTPeakBytes)
				assert.Equal(t, filepath.Join(dir, "m.shapes.pt"), cases[0].Shapes)
				assert.Equal(t, []int{1, 4, 1}, cases[0].ShapeBatches)
			} else {
				assert.Zero(t, cases[0].PTManagedBytes)
				assert.Zero(t, cases[0].PTPeakBytes)
				assert.Empty(t, cases[0].Shapes)
			}
		})
	}
}

func TestLargeDir(t *testing.T) {
	dir := LargeDir(t)
	cases, err := Manifest(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"mobilenet_v2", "resnet18"}, Models(cases))
	// What PyTorch's Static Runtime manages at batch 1 (the figure
	// for resnet18); every variant of a model freezes to the same graph.
	wantPT := map[string]int64{"resnet18": 4014080, "mobilenet_v2": 4816896}
	for _, c := range cases {
		assert.True(t, c.Large, c.Name())
		assert.Equal(t, wantPT[c.Model], c.PTManagedBytes, "%s: pt_managed_bytes", c.Name())
		assert.Positive(t, c.PTManagedTensors, c.Name())
		// Their convolutions have no out variant in 1.13: each run
		// allocates their outputs outside the plan.
		assert.Greater(t, c.PTUnmanagedPeakBytes, int64(0), "%s: pt_unmanaged_peak_bytes", c.Name())
		assert.Equal(t, c.PTManagedBytes+c.PTUnmanagedPeakBytes, c.PTPeakBytes, "%s: pt_peak_bytes", c.Name())
		assert.Empty(t, c.Shapes, c.Name())
	}
	assert.Len(t, cases, 8)
}

func TestFindPython(t *testing.T) {
	tests := []struct {
		name    string
		modules []string
		err     string
	}{
		{"stdlib only", []string{"json"}, ""},
		{"missing module", []string{"json", "gosr_no_such_module"}, "no Python that imports [json gosr_no_such_module]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOSR_PYTHON", "/nonexistent/python3")
			py, err := FindPython(tc.modules...)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "/nonexistent/python3")
				return
			}
			if err != nil {
				t.Skipf("no python3 here: %v", err)
			}
			assert.NotEqual(t, "/nonexistent/python3", py)
		})
	}
}

func TestCacheRoot(t *testing.T) {
	t.Setenv(CacheEnv, "/srv/gosr-fixtures")
	assert.Equal(t, "/srv/gosr-fixtures", CacheRoot())
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/home/someone/.cache")
	assert.Equal(t, "/home/someone/.cache/gosr", CacheRoot(), "the user cache dir's gosr")
}
