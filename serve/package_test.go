package serve_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/pyfallback"
	"github.com/gosr/gosr/serve"
)

// TestTorchPackageModel: a torch.package archive whose model calls
// packaged Python (numpy's rfft) is served like a TorchScript model, its
// fallbacks running in the server's interpreters, and answers what
// PyTorch computed.
func TestTorchPackageModel(t *testing.T) {
	m := repoModel{name: "feat", src: td + "pyfallback/numpy_feat.pt", config: `platform: "torch_package"`}
	var err error
	ts := startServerLoadErr(t, serve.Options{PythonInterpreters: 1}, &err, m)
	if errors.Is(err, pyfallback.ErrNoLibPython) {
		t.Skip(err)
	}
	require.NoError(t, err)
	exp, err := loaders.ReadTorchSave(td + "pyfallback/numpy_feat.expected.pt")
	require.NoError(t, err)
	d := exp.Dict()
	ins, _ := d.Get(ivalue.FromString("inputs"))
	outs, _ := d.Get(ivalue.FromString("outputs"))
	for i, in := range ins.List().Items {
		x := in.List().Items[0].Tensor()
		want := outs.List().Items[i].Tensor()
		code, _, b := ts.do(t, "POST", "/v2/models/feat/infer", mustJSON(t, map[string]any{"inputs": []any{jsonInput("INPUT__0", x)}}), nil)
		require.Equal(t, 200, code, string(b))
		var r jsonInfer
		require.NoError(t, json.Unmarshal(b, &r))
		assert.Equal(t, []int64{4, 8}, r.Outputs[0].Shape)
		got := floats(t, r.Outputs[0].Data)
		for k, w := range want.Float64s() {
			assert.InDelta(t, w, got[k], 1e-5*(1+w*w), "case %d element %d", i, k)
		}
	}
	var md serve.ModelMetadata
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/feat", &md))
	assert.Equal(t, "torch_package", md.Platform)
	assert.Contains(t, scrape(t, ts), "gosr_python_interpreter_busy_seconds_total")
}
