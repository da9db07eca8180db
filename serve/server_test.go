package serve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/inferpb"
	"github.com/gosr/gosr/staticruntime"
)

// repoModel places a model file (and optional files beside it) into a
// test repository.
type repoModel struct {
	name, src string
	version   int
	config    string
	extra     map[string]string // file name in the version dir -> source
}

func copyFile(t testing.TB, src, dst string) {
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, b, 0o644))
}

func makeRepo(t testing.TB, models ...repoModel) string {
	dir := t.TempDir()
	for _, m := range models {
		v := m.version
		if v == 0 {
			v = 1
		}
		vdir := filepath.Join(dir, m.name, strconv.Itoa(v))
		copyFile(t, m.src, filepath.Join(vdir, "model.pt"))
		for name, src := range m.extra {
			copyFile(t, src, filepath.Join(vdir, name))
		}
		if m.config != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, m.name, "config.pbtxt"), []byte(m.config), 0o644))
		}
	}
	return dir
}

const td = "../testdata/"

var (
	mlpModel  = repoModel{name: "mlp", src: td + "pt/mlp.scripted_frozen.pt", extra: map[string]string{"inputs.pt": td + "pt/mlp.inputs.pt"}}
	echoModel = repoModel{name: "echo", src: td + "serve/echo.pt"}
	pairModel = repoModel{name: "pair", src: td + "serve/pair.pt", extra: map[string]string{"inputs.pt": td + "serve/pair.inputs.pt"}}
	spinModel = repoModel{name: "spin", src: td + "serve/spin.pt"}
)

type testServer struct {
	*serve.Server
	base string // http://host:port
	grpc inferpb.GRPCInferenceServiceClient
	conn *grpc.ClientConn
	repo string
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startServer(t testing.TB, o serve.Options, models ...repoModel) *testServer {
	t.Helper()
	return startServerLoadErr(t, o, nil, models...)
}

// startServerLoadErr starts a server whose loading may fail: the error
// New returns is stored in *loadErr (nil: it must not fail).
func startServerLoadErr(t testing.TB, o serve.Options, loadErr *error, models ...repoModel) *testServer {
	t.Helper()
	if o.ModelRepository == "" {
		o.ModelRepository = makeRepo(t, models...)
	}
	o.HTTPAddr, o.GRPCAddr, o.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	if o.Instances == 0 {
		o.Instances = 2
	}
	s, err := serve.New(context.Background(), o)
	if loadErr != nil {
		*loadErr = err
	} else {
		require.NoError(t, err)
	}
	require.NoError(t, s.Start())
	conn, err := grpc.NewClient(s.Addr("grpc"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	ts := &testServer{Server: s, base: "http://" + s.Addr("http"), grpc: inferpb.NewGRPCInferenceServiceClient(conn), conn: conn, repo: o.ModelRepository}
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return ts
}

func (ts *testServer) do(t testing.TB, method, path string, body []byte, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.base+path, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

func (ts *testServer) getJSON(t testing.TB, path string, v any) int {
	code, _, b := ts.do(t, "GET", path, nil, nil)
	if v != nil && len(b) > 0 {
		require.NoError(t, json.Unmarshal(b, v), string(b))
	}
	return code
}

// inProcess runs model file path on args with a fresh StaticModule: what
// the server's answers must equal.
func inProcess(t testing.TB, path string, args ...*ivalue.Tensor) []*ivalue.Tensor {
	m, err := loaders.Load(path)
	require.NoError(t, err)
	defer m.Close()
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	require.NoError(t, err)
	defer sm.Close()
	vals := make([]ivalue.IValue, len(args))
	for i, a := range args {
		vals[i] = ivalue.FromTensor(a)
	}
	outs, err := sm.NewRuntime().Run(vals...)
	require.NoError(t, err)
	flat := reference.Flatten(outs)
	for i, f := range flat {
		flat[i] = f.Clone()
	}
	return flat
}

func samples(t testing.TB, path string) []*ivalue.Tensor {
	v, err := loaders.ReadTorchSave(path)
	require.NoError(t, err)
	return reference.Flatten([]ivalue.IValue{v})
}

// jsonInfer is the protocol's JSON response.
type jsonInfer struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version"`
	ID           string `json:"id"`
	Outputs      []struct {
		Name       string         `json:"name"`
		Datatype   string         `json:"datatype"`
		Shape      []int64        `json:"shape"`
		Data       []any          `json:"data"`
		Parameters map[string]any `json:"parameters"`
	} `json:"outputs"`
	Error string `json:"error"`
}

func jsonInput(name string, t *ivalue.Tensor) map[string]any {
	return map[string]any{"name": name, "datatype": serve.Datatype(t.DType()), "shape": shape64(t), "data": t.Float64s()}
}

func shape64(t *ivalue.Tensor) []int64 {
	s := make([]int64, t.Dim())
	for i, d := range t.Sizes() {
		s[i] = int64(d)
	}
	return s
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func floats(t testing.TB, data []any) []float64 {
	out := make([]float64, len(data))
	for i, d := range data {
		f, ok := d.(float64)
		require.True(t, ok, "element %d is %T", i, d)
		out[i] = f
	}
	return out
}

func assertClose(t testing.TB, want *ivalue.Tensor, got []float64, msg string) {
	t.Helper()
	w := want.Float64s()
	require.Len(t, got, len(w), msg)
	scale := 0.0
	for _, x := range w {
		scale = math.Max(scale, math.Abs(x))
	}
	for i := range w {
		require.InDelta(t, w[i], got[i], 1e-6*math.Max(scale, 1), "%s: element %d", msg, i)
	}
}

func TestHealthAndMetadata(t *testing.T) {
	ts := startServer(t, serve.Options{}, mlpModel, echoModel)
	var live, ready map[string]bool
	assert.Equal(t, 200, ts.getJSON(t, "/v2/health/live", &live))
	assert.True(t, live["live"])
	assert.Equal(t, 200, ts.getJSON(t, "/v2/health/ready", &ready))
	assert.True(t, ready["ready"])

	var md map[string]any
	require.Equal(t, 200, ts.getJSON(t, "/v2", &md))
	assert.Equal(t, "gosr", md["name"])
	assert.Contains(t, md["extensions"], "binary_tensor_data")

	var mm serve.ModelMetadata
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/mlp", &mm))
	assert.Equal(t, serve.ModelMetadata{Name: "mlp", Versions: []string{"1"}, Platform: "pytorch_libtorch",
		Inputs:  []serve.TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}},
		Outputs: []serve.TensorMetadata{{Name: "OUTPUT__0", Datatype: "FP32", Shape: []int64{1, 10}}}}, mm)
	require.Equal(t, 200, ts.getJSON(t, "/v2/models/mlp/versions/1", &mm))
	assert.Equal(t, "mlp", mm.Name)

	var mr map[string]any
	assert.Equal(t, 200, ts.getJSON(t, "/v2/models/mlp/ready", &mr))
	assert.Equal(t, true, mr["ready"])
	assert.Equal(t, 200, ts.getJSON(t, "/v2/models/mlp/versions/1/ready", &mr))
	assert.Equal(t, 503, ts.getJSON(t, "/v2/models/mlp/versions/7/ready", &mr))
	assert.Equal(t, 503, ts.getJSON(t, "/v2/models/nope/ready", &mr))

	var e map[string]string
	assert.Equal(t, 404, ts.getJSON(t, "/v2/models/nope", &e))
	assert.Contains(t, e["error"], `"nope"`)
	assert.Equal(t, 404, ts.getJSON(t, "/v2/models/mlp/versions/3", &e))
	assert.Equal(t, 400, ts.getJSON(t, "/v2/models/mlp/versions/x1", &e))
	assert.Equal(t, 404, ts.getJSON(t, "/v2/nothing", &e))

	// The same over gRPC.
	ctx := context.Background()
	l, err := ts.grpc.ServerLive(ctx, &inferpb.ServerLiveRequest{})
	require.NoError(t, err)
	assert.True(t, l.Live)
	r, err := ts.grpc.ServerReady(ctx, &inferpb.ServerReadyRequest{})
	require.NoError(t, err)
	assert.True(t, r.Ready)
	smd, err := ts.grpc.ServerMetadata(ctx, &inferpb.ServerMetadataRequest{})
	require.NoError(t, err)
	assert.Equal(t, "gosr", smd.Name)
	assert.Equal(t, serve.Extensions, smd.Extensions)
	gmd, err := ts.grpc.ModelMetadata(ctx, &inferpb.ModelMetadataRequest{Name: "mlp"})
	require.NoError(t, err)
	assert.Equal(t, "x", gmd.Inputs[0].Name)
	assert.Equal(t, []int64{1, 64}, gmd.Inputs[0].Shape)
	assert.Equal(t, "OUTPUT__0", gmd.Outputs[0].Name)
	mrr, err := ts.grpc.ModelReady(ctx, &inferpb.ModelReadyRequest{Name: "mlp", Version: "1"})
	require.NoError(t, err)
	assert.True(t, mrr.Ready)
	mrr, err = ts.grpc.ModelReady(ctx, &inferpb.ModelReadyRequest{Name: "nope"})
	require.NoError(t, err)
	assert.False(t, mrr.Ready)
	_, err = ts.grpc.ModelMetadata(ctx, &inferpb.ModelMetadataRequest{Name: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	hc, err := healthpb.NewHealthClient(ts.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, hc.Status, "grpc.health.v1")
}

// TestInferMatchesPyTorch: the mlp over JSON (flat and nested data),
// the binary extension and gRPC answers what PyTorch computed.
func TestInferMatchesPyTorch(t *testing.T) {
	ts := startServer(t, serve.Options{}, mlpModel)
	x := samples(t, td+"pt/mlp.inputs.pt")[0]
	want := samples(t, td+"pt/mlp.expected.pt")[0]

	// Flat data, the argument's name.
	code, _, b := ts.do(t, "POST", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"id": "r1", "inputs": []any{jsonInput("x", x)}}), nil)
	require.Equal(t, 200, code, string(b))
	var r jsonInfer
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, "mlp", r.ModelName)
	assert.Equal(t, "1", r.ModelVersion)
	assert.Equal(t, "r1", r.ID)
	require.Len(t, r.Outputs, 1)
	assert.Equal(t, "OUTPUT__0", r.Outputs[0].Name)
	assert.Equal(t, "FP32", r.Outputs[0].Datatype)
	assert.Equal(t, []int64{1, 10}, r.Outputs[0].Shape)
	assertClose(t, want, floats(t, r.Outputs[0].Data), "json flat")

	// Nested data, Triton's INPUT__0 name, a version in the path.
	nested := make([][]float64, 1)
	nested[0] = x.Float64s()
	body := mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "INPUT__0", "datatype": "FP32", "shape": []int{1, 64}, "data": nested}},
		"outputs": []any{map[string]any{"name": "OUTPUT__0"}}})
	code, _, b = ts.do(t, "POST", "/v2/models/mlp/versions/1/infer", body, nil)
	require.Equal(t, 200, code, string(b))
	r = jsonInfer{}
	require.NoError(t, json.Unmarshal(b, &r))
	assertClose(t, want, floats(t, r.Outputs[0].Data), "json nested")

	// Binary input and binary output.
	hdr := mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": []int{1, 64},
		"parameters": map[string]any{"binary_data_size": 256}}}, "outputs": []any{map[string]any{"name": "OUTPUT__0", "parameters": map[string]any{"binary_data": true}}}})
	raw := make([]byte, 256)
	for i, f := range x.F32() {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	code, h, b := ts.do(t, "POST", "/v2/models/mlp/infer", append(hdr, raw...), map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(hdr))})
	require.Equal(t, 200, code, string(b))
	n, err := strconv.Atoi(h.Get("Inference-Header-Content-Length"))
	require.NoError(t, err)
	r = jsonInfer{}
	require.NoError(t, json.Unmarshal(b[:n], &r))
	assert.Equal(t, float64(40), r.Outputs[0].Parameters["binary_data_size"])
	assert.Nil(t, r.Outputs[0].Data)
	require.Len(t, b[n:], 40)
	got := make([]float64, 10)
	for i := range got {
		got[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[n+4*i:])))
	}
	assertClose(t, want, got, "binary")

	// gRPC, raw.
	resp, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "mlp", Id: "g1",
		Inputs:           []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}},
		RawInputContents: [][]byte{raw}})
	require.NoError(t, err)
	assert.Equal(t, "g1", resp.Id)
	require.Len(t, resp.RawOutputContents, 1)
	for i := range got {
		got[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(resp.RawOutputContents[0][4*i:])))
	}
	assertClose(t, want, got, "grpc raw")

	// gRPC, typed contents.
	resp, err = ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "mlp",
		Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "INPUT__0", Datatype: "FP32", Shape: []int64{1, 64},
			Contents: &inferpb.InferTensorContents{Fp32Contents: x.F32()}}}})
	require.NoError(t, err)
	require.Empty(t, resp.RawOutputContents)
	for i, f := range resp.Outputs[0].Contents.Fp32Contents {
		got[i] = float64(f)
	}
	assertClose(t, want, got, "grpc typed")
}

// dtypeCase is a tensor of each datatype gosr runs, with values that
// stress its range.
func dtypeCases() []*ivalue.Tensor {
	f16 := ivalue.NewTensor(ivalue.Float16, 2, 2)
	for i, v := range []float32{1.5, -2, 0.25, 65504} {
		f16.U16()[i] = ivalue.Float32ToHalf(v)
	}
	bf16 := ivalue.NewTensor(ivalue.BFloat16, 3)
	for i, v := range []float32{1, -3.5, 1e30} {
		bf16.U16()[i] = uint16(math.Float32bits(v) >> 16)
	}
	i16 := ivalue.NewTensor(ivalue.Int16, 3)
	copy(i16.I16(), []int16{-32768, 0, 32767})
	return []*ivalue.Tensor{
		ivalue.F32Tensor([]float32{1.5, -2.25, 3e-7, 1e30, 0, -0}, 2, 3),
		ivalue.F64Tensor([]float64{math.Pi, -1e300, 5e-324}, 3),
		f16, bf16,
		ivalue.I64Tensor([]int64{math.MinInt64 + 1, -1, 0, math.MaxInt64}, 4),
		ivalue.I32Tensor([]int32{math.MinInt32, 7, math.MaxInt32}, 3, 1),
		i16,
		ivalue.I8Tensor([]int8{-128, 0, 127}, 3),
		ivalue.U8Tensor([]uint8{0, 1, 255}, 1, 3),
		ivalue.BoolTensor([]bool{true, false, true, true}, 2, 2),
		ivalue.F32Tensor([]float32{}, 0, 4),
	}
}

func rawOf(t *ivalue.Tensor) []byte {
	b := make([]byte, 0, t.Nbytes())
	for i := range t.Numel() {
		switch t.DType() {
		case ivalue.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(t.F32()[i]))
		case ivalue.Float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.F64()[i]))
		case ivalue.Float16, ivalue.BFloat16:
			b = binary.LittleEndian.AppendUint16(b, t.U16()[i])
		case ivalue.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(t.I64()[i]))
		case ivalue.Int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(t.I32()[i]))
		case ivalue.Int16:
			b = binary.LittleEndian.AppendUint16(b, uint16(t.I16()[i]))
		case ivalue.Int8:
			b = append(b, byte(t.I8()[i]))
		case ivalue.Uint8:
			b = append(b, t.U8()[i])
		case ivalue.Bool:
			if t.B()[i] {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

// jsonValues is t's elements as the JSON data a client would send.
func jsonValues(t *ivalue.Tensor) []any {
	out := make([]any, t.Numel())
	for i := range out {
		switch t.DType() {
		case ivalue.Int64:
			out[i] = json.Number(strconv.FormatInt(t.I64()[i], 10))
		case ivalue.Bool:
			out[i] = t.B()[i]
		case ivalue.Float16:
			out[i] = ivalue.HalfToFloat32(t.U16()[i])
		case ivalue.BFloat16:
			out[i] = math.Float32frombits(uint32(t.U16()[i]) << 16)
		case ivalue.Float32:
			out[i] = t.F32()[i]
		default:
			out[i] = t.Float64s()[i]
		}
	}
	return out
}

// TestEveryDatatype: a tensor of every datatype goes through the echo
// model over JSON, binary, gRPC raw and gRPC typed, and comes back bit
// for bit.
func TestEveryDatatype(t *testing.T) {
	ts := startServer(t, serve.Options{}, echoModel)
	for _, x := range dtypeCases() {
		dt := serve.Datatype(x.DType())
		want := rawOf(x)
		t.Run(dt+"/"+fmt.Sprint(x.Sizes()), func(t *testing.T) {
			// JSON in, binary out.
			body := mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": dt, "shape": shape64(x), "data": jsonValues(x)}},
				"parameters": map[string]any{"binary_data_output": true}})
			code, h, b := ts.do(t, "POST", "/v2/models/echo/infer", body, nil)
			require.Equal(t, 200, code, string(b))
			n, _ := strconv.Atoi(h.Get("Inference-Header-Content-Length"))
			assert.Equal(t, want, b[n:], "json in, binary out")

			// Binary in, JSON out: the JSON numbers are the values.
			hdr := mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": dt, "shape": shape64(x),
				"parameters": map[string]any{"binary_data_size": len(want)}}}})
			code, _, b = ts.do(t, "POST", "/v2/models/echo/infer", append(hdr, want...), map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(hdr))})
			require.Equal(t, 200, code, string(b))
			var r jsonInfer
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			require.NoError(t, d.Decode(&r))
			assert.Equal(t, dt, r.Outputs[0].Datatype)
			assert.Equal(t, shape64(x), r.Outputs[0].Shape)
			require.Len(t, r.Outputs[0].Data, x.Numel())
			for i, v := range jsonValues(x) {
				switch w := v.(type) {
				case bool:
					assert.Equal(t, w, r.Outputs[0].Data[i])
				case json.Number:
					assert.Equal(t, w, r.Outputs[0].Data[i])
				default:
					g, err := r.Outputs[0].Data[i].(json.Number).Float64()
					require.NoError(t, err)
					assert.Equal(t, fmt.Sprint(w), fmt.Sprint(castLike(w, g)), "element %d", i)
				}
			}

			// gRPC raw.
			resp, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "echo",
				Inputs:           []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: dt, Shape: shape64(x)}},
				RawInputContents: [][]byte{want}})
			require.NoError(t, err)
			assert.Equal(t, dt, resp.Outputs[0].Datatype)
			assert.Equal(t, shape64(x), resp.Outputs[0].Shape)
			if len(want) == 0 {
				assert.Empty(t, resp.RawOutputContents[0])
			} else {
				assert.Equal(t, want, resp.RawOutputContents[0])
			}
		})
	}
}

func castLike(w any, g float64) any {
	switch w.(type) {
	case float32:
		return float32(g)
	}
	return g
}

func TestGRPCTypedContents(t *testing.T) {
	ts := startServer(t, serve.Options{}, echoModel)
	ctx := context.Background()
	cases := []struct {
		dt   string
		c    *inferpb.InferTensorContents
		n    int64
		back func(*inferpb.InferTensorContents) any
		want any
	}{
		{"BOOL", &inferpb.InferTensorContents{BoolContents: []bool{true, false}}, 2, func(c *inferpb.InferTensorContents) any { return c.BoolContents }, []bool{true, false}},
		{"INT8", &inferpb.InferTensorContents{IntContents: []int32{-128, 127}}, 2, func(c *inferpb.InferTensorContents) any { return c.IntContents }, []int32{-128, 127}},
		{"INT16", &inferpb.InferTensorContents{IntContents: []int32{-300, 300}}, 2, func(c *inferpb.InferTensorContents) any { return c.IntContents }, []int32{-300, 300}},
		{"INT32", &inferpb.InferTensorContents{IntContents: []int32{math.MinInt32, 5}}, 2, func(c *inferpb.InferTensorContents) any { return c.IntContents }, []int32{math.MinInt32, 5}},
		{"INT64", &inferpb.InferTensorContents{Int64Contents: []int64{math.MaxInt64, -5}}, 2, func(c *inferpb.InferTensorContents) any { return c.Int64Contents }, []int64{math.MaxInt64, -5}},
		{"UINT8", &inferpb.InferTensorContents{UintContents: []uint32{0, 255}}, 2, func(c *inferpb.InferTensorContents) any { return c.UintContents }, []uint32{0, 255}},
		{"FP32", &inferpb.InferTensorContents{Fp32Contents: []float32{1.5, -2}}, 2, func(c *inferpb.InferTensorContents) any { return c.Fp32Contents }, []float32{1.5, -2}},
		{"FP64", &inferpb.InferTensorContents{Fp64Contents: []float64{math.Pi, -1}}, 2, func(c *inferpb.InferTensorContents) any { return c.Fp64Contents }, []float64{math.Pi, -1}},
	}
	for _, c := range cases {
		t.Run(c.dt, func(t *testing.T) {
			resp, err := ts.grpc.ModelInfer(ctx, &inferpb.ModelInferRequest{ModelName: "echo",
				Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: c.dt, Shape: []int64{c.n}, Contents: c.c}}})
			require.NoError(t, err)
			assert.Equal(t, c.want, c.back(resp.Outputs[0].Contents))
		})
	}
	// Out of range and wrong counts.
	for _, c := range []struct {
		dt string
		c  *inferpb.InferTensorContents
	}{
		{"INT8", &inferpb.InferTensorContents{IntContents: []int32{128, 0}}},
		{"UINT8", &inferpb.InferTensorContents{UintContents: []uint32{256, 0}}},
		{"FP32", &inferpb.InferTensorContents{Fp32Contents: []float32{1}}},
		{"FP16", &inferpb.InferTensorContents{UintContents: []uint32{1, 2}}},
	} {
		_, err := ts.grpc.ModelInfer(ctx, &inferpb.ModelInferRequest{ModelName: "echo",
			Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: c.dt, Shape: []int64{2}, Contents: c.c}}})
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", c.dt, err)
	}
}

// TestBadRequests: each malformed request gets its status and a message
// naming what was wrong, and the server keeps serving.
func TestBadRequests(t *testing.T) {
	ts := startServer(t, serve.Options{MaxRequestBytes: 1 << 20}, mlpModel, pairModel)
	x64 := make([]float64, 64)
	ok := func(name string) map[string]any {
		return map[string]any{"name": name, "datatype": "FP32", "shape": []int{1, 64}, "data": x64}
	}
	const binHdr8 = `{"inputs":[{"name":"x","datatype":"FP32","shape":[1,64],"parameters":{"binary_data_size":8}}]}`
	cases := []struct {
		name   string
		path   string
		body   []byte
		header map[string]string
		code   int
		msg    string
	}{
		{"malformed JSON", "/v2/models/mlp/infer", []byte(`{"inputs": [`), nil, 400, "malformed JSON"},
		{"not an object", "/v2/models/mlp/infer", []byte(`[1,2]`), nil, 400, "malformed JSON"},
		{"unknown datatype", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP8", "shape": []int{1}, "data": []int{1}}}}), nil, 400, `datatype "FP8"`},
		{"wrong datatype", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "INT64", "shape": []int{1, 64}, "data": x64}}}), nil, 400, "datatype INT64; the model takes FP32"},
		{"wrong shape", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": []int{2, 32}, "data": x64}}}), nil, 400, "shape [2 32]"},
		{"too few elements", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": []int{1, 64}, "data": x64[:3]}}}), nil, 400, "3 elements"},
		{"not a number", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,"a"]}]}`), nil, 400, "not a number"},
		{"negative shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[-1,2],"data":[1,2]}]}`), nil, 400, "negative"},
		{"huge shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[4000000000,4000000000],"data":[]}]}`), nil, 400, "elements"},
		{"over the byte limit by shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[1,10000000],"data":[]}]}`), nil, 400, "limit"},
		{"missing input", "/v2/models/pair/infer", mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "a", "datatype": "FP32", "shape": []int{2, 3}, "data": make([]int, 6)}}}), nil, 400, `input "b" is missing`},
		{"unknown input", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x"), ok("y")}}), nil, 400, `no input "y"`},
		{"input twice", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x"), ok("INPUT__0")}}), nil, 400, "twice"},
		{"unknown output", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x")}, "outputs": []any{map[string]any{"name": "OUTPUT__3"}}}), nil, 400, `no output "OUTPUT__3"`},
		{"unknown model", "/v2/models/nope/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x")}}), nil, 404, `"nope"`},
		{"unknown version", "/v2/models/mlp/versions/9/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x")}}), nil, 404, "no version 9"},
		{"header length past the body", "/v2/models/mlp/infer", []byte(`{}`), map[string]string{"Inference-Header-Content-Length": "100"}, 400, "Inference-Header-Content-Length"},
		{"binary size past the body", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[1,64],"parameters":{"binary_data_size":256}}]}`), map[string]string{"Inference-Header-Content-Length": "96"}, 400, "binary"},
		{"binary size wrong for the shape", "/v2/models/mlp/infer", append([]byte(binHdr8), make([]byte, 8)...), map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(binHdr8))}, 400, "8 bytes of raw contents"},
		{"bytes left over", "/v2/models/mlp/infer", append(mustJSON(t, map[string]any{"inputs": []any{ok("x")}}), 1, 2, 3), map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(mustJSON(t, map[string]any{"inputs": []any{ok("x")}})))}, 400, "left after"},
		{"body over the limit", "/v2/models/mlp/infer", bytes.Repeat([]byte(" "), 2<<20), nil, 413, "limit"},
		{"load of a missing model", "/v2/repository/models/nope/load", nil, nil, 404, "not in the repository"},
		{"load of a path", "/v2/repository/models/..%2Fetc/load", nil, nil, 400, "not a model name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, h, b := ts.do(t, "POST", c.path, c.body, c.header)
			assert.Equal(t, c.code, code, string(b))
			assert.Equal(t, "application/json", h.Get("Content-Type"))
			var e map[string]string
			require.NoError(t, json.Unmarshal(b, &e), string(b))
			assert.Contains(t, e["error"], c.msg)
		})
	}
	// A body that says it is longer than it is.
	req, err := http.NewRequest("POST", ts.base+"/v2/models/mlp/infer", strings.NewReader(`{"inputs":[]}`))
	require.NoError(t, err)
	req.ContentLength = 1000
	_, err = http.DefaultClient.Do(req)
	assert.Error(t, err, "the client itself refuses to send a short body")
	// And it still serves.
	code, _, b := ts.do(t, "POST", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{ok("x")}}), nil)
	assert.Equal(t, 200, code, string(b))
	// The gRPC errors carry their codes.
	ctx := context.Background()
	_, err = ts.grpc.ModelInfer(ctx, &inferpb.ModelInferRequest{ModelName: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	_, err = ts.grpc.ModelInfer(ctx, &inferpb.ModelInferRequest{ModelName: "mlp", Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}}, RawInputContents: [][]byte{make([]byte, 10)}})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "10 bytes")
	_, err = ts.grpc.ModelInfer(ctx, &inferpb.ModelInferRequest{ModelName: "mlp", Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}}, RawInputContents: [][]byte{make([]byte, 2<<20)}})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "a message over the limit")
}
