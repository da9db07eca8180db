package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/staticruntime"
)

func TestCheckRunnableArchive(t *testing.T) {
	var out bytes.Buffer
	err := (&checkFlags{modelFlags: modelFlags{model: filepath.Join(ptfixture.Committed(), "mlp.scripted.pt")}}).run(&out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "mlp.scripted.pt: gosr's Go kernels run every op")
}

func TestCheckUnloadable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.pt")
	require.NoError(t, os.WriteFile(bad, []byte("not a zip"), 0o644))
	var out bytes.Buffer
	err := (&checkFlags{modelFlags: modelFlags{model: bad}}).run(&out)
	require.ErrorIs(t, err, errGaps)
	assert.Contains(t, out.String(), "bad.pt: cannot be loaded: ")
}

func TestCheckReport(t *testing.T) {
	res := checkResult{Model: "m.pt", Backend: "libtorch", Gaps: []staticruntime.Gap{
		{Op: "aten::lstm", Signature: "aten::lstm(Tensor) -> (Tensor)", Sources: []string{"code/a.py:3:4", "code/a.py:3:4", "code/b.py:9:1"}, Backend: "libtorch"},
		{Op: "aten::device", Signature: "aten::device(str) -> (Device)", Sources: []string{""}},
	}}
	var out bytes.Buffer
	writeCheck(&out, res)
	assert.Equal(t, `m.pt: 2 op(s) with no Go kernel, at 4 node(s):
  aten::lstm (3 nodes)
    signature: aten::lstm(Tensor) -> (Tensor)
    at code/a.py:3:4 (2 nodes)
    at code/b.py:9:1
    libtorch: has it (runs there with -backend auto or -backend libtorch)
  aten::device (1 node)
    signature: aten::device(str) -> (Device)
    at (no source position recorded)
    libtorch: has no kernel for it either
libtorch covers 1 of the 2; with -backend auto the model runs only once the rest have kernels.
`, out.String())
}

// An archive whose code the loader cannot compile (a name that is not
// defined) still has its ops listed, from the code's text: lgamma and
// digamma have no Go kernel; relu has one and is not listed.
func TestCheckUnloadableListsCodeOps(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(ptfixture.Committed(), "mlp.scripted.pt"))
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		if strings.HasSuffix(f.Name, "code/__torch__/torch/nn/modules/activation.py") {
			data = []byte(strings.Replace(string(data), "    _0 = __torch__.torch.nn.functional.relu(input, False, )\n",
				"    _1 = torch.lgamma(input)\n    _2 = not_defined(_1)\n    _3 = torch.digamma(torch.lgamma(_2))\n"+
					"    _0 = __torch__.torch.nn.functional.relu(_3, False, )\n", 1))
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	path := filepath.Join(t.TempDir(), "bad.pt")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	var out bytes.Buffer
	err = (&checkFlags{modelFlags: modelFlags{model: path}}).run(&out)
	require.ErrorIs(t, err, errGaps)
	const act = "code/__torch__/torch/nn/modules/activation.py"
	assert.Contains(t, out.String(), "bad.pt: cannot be loaded: ")
	assert.Contains(t, out.String(), "not_defined")
	assert.Contains(t, out.String(), `ops its code calls that no Go kernel has (read from the code's text, so branches the loader would remove are included):
  aten::lgamma (2 calls)
    at `+act+`:9:10
    at `+act+`:11:24
  aten::digamma (1 call)
    at `+act+`:11:10
`)
}

// ops -per-node prints the per-op table, then every node of the built-in
// mlp in order with its output's sizes and its matrix products' rates.
func TestOpsPerNode(t *testing.T) {
	var out bytes.Buffer
	f := &opsFlags{modelFlags: modelFlags{model: "mlp"}, runtimeFlags: runtimeFlags{planner: "greedy", interop: 1}, iters: 5, warmup: 1, perNode: true}
	require.NoError(t, f.run(&out))
	s := out.String()
	table, nodes, ok := strings.Cut(s, "Time per node:\n")
	require.True(t, ok, s)
	assert.Contains(t, table, "Time per node type:")
	lines := strings.Split(strings.TrimSuffix(nodes, "\n"), "\n")
	require.NotEmpty(t, lines)
	linears := 0
	for _, l := range lines {
		assert.Regexp(t, `^\s+[0-9.]+ ms\.\s+[0-9.]+%\. .*node `, l)
		if strings.Contains(l, "gosr::linear_act") {
			linears++
			assert.Regexp(t, `[0-9.]+ GF/s \[[0-9 ]+\] node`, l)
		}
	}
	assert.Positive(t, linears, "the mlp's layers")
}
