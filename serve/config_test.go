package serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/configpb"
)

// A config.pbtxt as Triton's users write them, with fields gosr skips.
const tritonConfig = `
name: "resnet18"
platform: "pytorch_libtorch"
max_batch_size: 8
input [
  {
    name: "INPUT__0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
  }
]
output [
  {
    name: "OUTPUT__0"
    data_type: TYPE_FP32
    dims: [ 1000 ]
    label_filename: "labels.txt"
  }
]
instance_group [ { count: 2 kind: KIND_CPU } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 200
  default_queue_policy { max_queue_size: 16 }
}
parameters: { key: "INFERENCE_MODE" value: { string_value: "true" } }
optimization { execution_accelerators { cpu_execution_accelerator : [ { name : "openvino" } ] } }
version_policy: { latest: { num_versions: 2 } }
`

func TestParseConfig(t *testing.T) {
	cfg, warnings, err := serve.ParseConfig("config.pbtxt", []byte(tritonConfig))
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "label_filename")
	assert.Equal(t, "resnet18", cfg.Name)
	assert.Equal(t, int32(8), cfg.MaxBatchSize)
	require.Len(t, cfg.Input, 1)
	assert.Equal(t, configpb.DataType_TYPE_FP32, cfg.Input[0].DataType)
	assert.Equal(t, []int64{3, 224, 224}, cfg.Input[0].Dims)
	assert.Equal(t, []int64{1000}, cfg.Output[0].Dims)
	assert.Equal(t, int32(2), cfg.InstanceGroup[0].Count)
	assert.Equal(t, []int32{4, 8}, cfg.DynamicBatching.PreferredBatchSize)
	assert.Equal(t, uint64(200), cfg.DynamicBatching.MaxQueueDelayMicroseconds)
	assert.Equal(t, uint32(16), cfg.DynamicBatching.DefaultQueuePolicy.MaxQueueSize)
	assert.Equal(t, "true", cfg.Parameters["INFERENCE_MODE"].StringValue)
	assert.Equal(t, uint32(2), cfg.VersionPolicy.GetLatest().NumVersions)
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ name, text, msg string }{
		{"syntax", `name: "x`, "config.pbtxt"},
		{"platform", `platform: "onnxruntime_onnx"`, `platform "onnxruntime_onnx"`},
		{"backend", `backend: "python"`, `backend "python"`},
		{"negative batch", `max_batch_size: -1`, "negative"},
		{"dup input", `input [{name: "a" data_type: TYPE_FP32 dims: [1]}, {name: "a" data_type: TYPE_FP32 dims: [1]}]`, "twice"},
		{"unnamed", `input [{data_type: TYPE_FP32 dims: [1]}]`, "no name"},
		{"string type", `input [{name: "a" data_type: TYPE_STRING dims: [1]}]`, "TYPE_STRING"},
		{"bad dim", `output [{name: "a" data_type: TYPE_FP32 dims: [-2]}]`, "dims"},
		{"gpu", `instance_group [{count: 1 kind: KIND_GPU}]`, "KIND_GPU"},
		{"batching without batch", `dynamic_batching {}`, "max_batch_size > 0"},
		{"preferred too big", `max_batch_size: 4 dynamic_batching { preferred_batch_size: [8] }`, "preferred_batch_size 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := serve.ParseConfig("config.pbtxt", []byte(c.text))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			assert.Contains(t, err.Error(), "config.pbtxt")
		})
	}
}

// TestConfiguredModel: a model served under a config: its names,
// datatypes and shapes, batching limits, version policy and instance
// count hold, and a config that does not fit the model is refused at
// load with the model still listed.
func TestConfiguredModel(t *testing.T) {
	cfg := `
platform: "pytorch_libtorch"
max_batch_size: 4
input [ { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 3 ] }, { name: "a" data_type: TYPE_FP32 dims: [ 3 ] } ]
output [ { name: "SUM" data_type: TYPE_FP32 dims: [ 3 ] }, { name: "PRODUCT" data_type: TYPE_FP32 dims: [ 3 ] } ]
instance_group [ { count: 3 } ]
version_policy: { all: {} }
`
	dir := makeRepo(t, repoModel{name: "pair", src: td + "serve/pair.pt", config: cfg},
		repoModel{name: "pair", src: td + "serve/pair.pt", version: 2},
		repoModel{name: "bad", src: td + "serve/pair.pt", config: `input [ { name: "x" data_type: TYPE_FP32 dims: [ 3 ] } ]`})
	var err error
	ts := startServerLoadErr(t, serve.Options{ModelRepository: dir}, &err)
	require.Error(t, err, "bad's config declares one input")
	assert.Contains(t, err.Error(), "declares 1 inputs; forward takes 2")

	var md serve.ModelMetadata
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/pair", &md))
	assert.Equal(t, []string{"1", "2"}, md.Versions)
	assert.Equal(t, []serve.TensorMetadata{{Name: "a", Datatype: "FP32", Shape: []int64{-1, 3}}, {Name: "INPUT__1", Datatype: "FP32", Shape: []int64{-1, 3}}}, md.Inputs)
	assert.Equal(t, []serve.TensorMetadata{{Name: "SUM", Datatype: "FP32", Shape: []int64{-1, 3}}, {Name: "PRODUCT", Datatype: "FP32", Shape: []int64{-1, 3}}}, md.Outputs)
	assert.Contains(t, scrape(t, ts), `gosr_model_instances{model="pair",version="2"} 3`)

	in := func(name string, rows int, v float64) map[string]any {
		data := make([]float64, rows*3)
		for i := range data {
			data[i] = v + float64(i)
		}
		return map[string]any{"name": name, "datatype": "FP32", "shape": []int{rows, 3}, "data": data}
	}
	code, _, b := ts.do(t, "POST", "/v2/models/pair/versions/1/infer", mustJSON(t, map[string]any{
		"inputs": []any{in("a", 2, 1), in("INPUT__1", 2, 10)}, "outputs": []any{map[string]any{"name": "PRODUCT"}}}), nil)
	require.Equal(t, 200, code, string(b))
	var r jsonInfer
	require.NoError(t, json.Unmarshal(b, &r))
	require.Len(t, r.Outputs, 1)
	assert.Equal(t, "PRODUCT", r.Outputs[0].Name)
	assert.Equal(t, []float64{10, 22, 36, 52, 70, 90}, floats(t, r.Outputs[0].Data))

	code, _, b = ts.do(t, "POST", "/v2/models/pair/infer", mustJSON(t, map[string]any{"inputs": []any{in("a", 5, 1), in("INPUT__1", 5, 1)}}), nil)
	assert.Equal(t, 400, code)
	assert.Contains(t, string(b), "batch size 5 is not in [1, max_batch_size 4]")
	code, _, b = ts.do(t, "POST", "/v2/models/pair/infer", mustJSON(t, map[string]any{"inputs": []any{in("a", 2, 1), in("INPUT__1", 3, 1)}}), nil)
	assert.Equal(t, 400, code)
	assert.Contains(t, string(b), "batch sizes 2 and 3")

	var idx []serve.IndexEntry
	code, _, b = ts.do(t, "POST", "/v2/repository/index", []byte(`{"ready": false}`), nil)
	require.Equal(t, 200, code)
	require.NoError(t, json.Unmarshal(b, &idx))
	assert.Equal(t, []serve.IndexEntry{
		{Name: "bad", State: serve.StateUnavailable, Reason: idx[0].Reason},
		{Name: "pair", Version: "1", State: serve.StateReady},
		{Name: "pair", Version: "2", State: serve.StateReady},
	}, idx)
	assert.Contains(t, idx[0].Reason, "forward takes 2")
}

// TestWarmupAndNoConfig: without config.pbtxt the signature names the
// inputs, inputs.pt beside the model gives its datatypes and shapes (and
// warms it), and a model with neither still serves.
func TestWarmupAndNoConfig(t *testing.T) {
	ts := startServer(t, serve.Options{}, pairModel, echoModel)
	var md serve.ModelMetadata
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/pair", &md))
	assert.Equal(t, []serve.TensorMetadata{{Name: "a", Datatype: "FP32", Shape: []int64{2, 3}}, {Name: "b", Datatype: "FP32", Shape: []int64{2, 3}}}, md.Inputs)
	assert.Equal(t, []serve.TensorMetadata{{Name: "OUTPUT__0", Datatype: "FP32", Shape: []int64{2, 3}}, {Name: "OUTPUT__1", Datatype: "FP32", Shape: []int64{2, 3}}}, md.Outputs)
	m := scrape(t, ts)
	assert.Contains(t, m, `nv_inference_exec_count{model="pair",version="1"}`, "warm-up runs are executions")
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/echo", &md))
	assert.Equal(t, []serve.TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{-1}}}, md.Inputs)
}

func TestModelControlNone(t *testing.T) {
	ts := startServer(t, serve.Options{ModelControl: "none"}, echoModel)
	code, _, b := ts.do(t, "POST", "/v2/repository/models/echo/load", nil, nil)
	assert.Equal(t, 503, code)
	assert.Contains(t, string(b), "model control is off")
}

func TestNoRepository(t *testing.T) {
	// A repository that cannot be read: no server (gosr serve exits).
	s, err := serve.New(context.Background(), serve.Options{ModelRepository: filepath.Join(t.TempDir(), "none"), Logger: quietLogger()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model repository")
	assert.Nil(t, s)
	// A model that does not load: a server for the rest, and the error.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "m"), 0o755))
	s, err = serve.New(context.Background(), serve.Options{ModelRepository: dir, Logger: quietLogger()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no version directory")
	require.NotNil(t, s)
	require.NoError(t, s.Shutdown(context.Background()))
}
