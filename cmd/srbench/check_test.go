package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/staticruntime"
)

func TestCheckRunnableArchive(t *testing.T) {
	var out bytes.Buffer
	err := cmdCheck(flags{model: filepath.Join(ptfixture.Committed(), "mlp.scripted.pt")}, &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "mlp.scripted.pt: gosr's Go kernels run every op")
}

func TestCheckUnloadable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.pt")
	require.NoError(t, os.WriteFile(bad, []byte("not a zip"), 0o644))
	var out bytes.Buffer
	err := cmdCheck(flags{model: bad}, &out)
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
