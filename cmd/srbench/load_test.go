package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/inferpb"
)

func TestIsStable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tputs []float64
		want  bool
	}{
		{"too few", []float64{100, 100}, false},
		{"equal", []float64{100, 100, 100}, true},
		{"within 10% of the mean", []float64{95, 100, 105}, true},
		{"one 11% off the mean", []float64{89, 105, 106}, false},
		{"only the last three count", []float64{10, 500, 100, 101, 99}, true},
		{"the last is off", []float64{100, 101, 99, 150}, false},
		{"nothing succeeds", []float64{0, 0, 0}, true},
		{"a window with nothing", []float64{0, 100, 100}, false},
	} {
		assert.Equal(t, tc.want, isStable(tc.tputs, 3, 0.10), tc.name)
	}
}

// win is a window of one second holding n requests of lat µs each and
// errs failures.
func win(n int, latUs int64, errs int) window {
	w := window{lat: make([]int64, n), errors: errs, elapsed: time.Second}
	for i := range w.lat {
		w.lat[i] = latUs * 1000
	}
	if errs > 0 {
		w.firstErr = errors.New("503 Service Unavailable: queue full")
	}
	return w
}

func TestMeasureWindows(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ws         []window
		max        int
		taken      int
		stable     bool
		throughput float64
		requests   int
		errs       int
	}{
		// A warm-up window first, then three that agree: the first is
		// left out of the figures.
		{"stable after warm-up", []window{win(10, 900, 0), win(100, 10, 0), win(104, 10, 0), win(96, 10, 0), win(1, 1, 0)}, 10, 4, true, 100, 300, 0},
		{"stable at once", []window{win(50, 20, 1), win(50, 20, 0), win(50, 20, 2)}, 10, 3, true, 50, 150, 3},
		// Never stable: max windows, the last three reported.
		{"unstable", []window{win(10, 1, 0), win(100, 1, 0), win(10, 1, 0), win(100, 1, 0), win(10, 1, 0)}, 5, 5, false, 40, 120, 0},
	} {
		i := 0
		next := func() (window, error) {
			w := tc.ws[i]
			i++
			return w, nil
		}
		r, err := measureWindows(next, tc.max, 0.10)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.taken, i, "%s: windows taken", tc.name)
		assert.Equal(t, tc.taken, r.Windows, tc.name)
		assert.Len(t, r.WindowThroughputs, tc.taken, tc.name)
		assert.Equal(t, tc.stable, r.Stable, tc.name)
		assert.InDelta(t, tc.throughput, r.Throughput, 1e-9, tc.name)
		assert.Equal(t, tc.requests, r.Requests, tc.name)
		assert.Equal(t, tc.errs, r.Errors, tc.name)
		if tc.errs > 0 {
			assert.Equal(t, "503 Service Unavailable: queue full", r.FirstError, tc.name)
		}
	}

	_, err := measureWindows(func() (window, error) { return window{}, context.Canceled }, 10, 0.1)
	assert.ErrorIs(t, err, context.Canceled)
}

// The merged windows' percentiles are over every request of the three.
func TestSummarizePercentiles(t *testing.T) {
	// 1..100 µs spread over three windows, out of order.
	ws := make([]window, 3)
	for i := range 100 {
		v := int64((i*37)%100+1) * 1000
		ws[i%3].lat = append(ws[i%3].lat, v)
	}
	for i := range ws {
		ws[i].elapsed = 500 * time.Millisecond
	}
	r := summarize(ws)
	assert.Equal(t, 100, r.Requests)
	assert.InDelta(t, 100/1.5, r.Throughput, 1e-9)
	assert.InDelta(t, 50.0, r.P50Us, 1e-9)
	assert.InDelta(t, 90.0, r.P90Us, 1e-9)
	assert.InDelta(t, 95.0, r.P95Us, 1e-9)
	assert.InDelta(t, 99.0, r.P99Us, 1e-9)
	assert.InDelta(t, 50.5, r.MeanUs, 1e-9)

	assert.Equal(t, levelResult{}, summarize(nil))
	assert.InDelta(t, 7.0, nearestRank([]int64{7000}, 95), 1e-9)
	assert.Zero(t, nearestRank(nil, 95))
}

func TestRecorderTake(t *testing.T) {
	r := &recorder{start: time.Now().Add(-time.Second)}
	r.add(3*time.Microsecond, nil)
	r.add(time.Microsecond, errors.New("first"))
	r.add(time.Microsecond, errors.New("second"))
	w := r.take()
	assert.Equal(t, []int64{3000}, w.lat)
	assert.Equal(t, 2, w.errors)
	assert.EqualError(t, w.firstErr, "first")
	assert.GreaterOrEqual(t, w.elapsed, time.Second)
	w2 := r.take()
	assert.Empty(t, w2.lat, "a fresh window")
	assert.Zero(t, w2.errors)
	assert.NoError(t, w2.firstErr)
	assert.Less(t, w2.elapsed, time.Second)
}

// Every datatype's elements survive raw -> JSON -> raw, and bad data is
// refused with what is wrong.
func TestRawJSON(t *testing.T) {
	rngData := func(dt string) []byte {
		raw, err := fillRaw(dt, []int64{2, 3}, newTestRand(), false)
		require.NoError(t, err, dt)
		return raw
	}
	for _, dt := range []string{"BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64"} {
		raw := rngData(dt)
		size, err := elemSize(dt)
		require.NoError(t, err)
		require.Len(t, raw, 6*size, dt)
		elems, err := jsonElems(dt, raw)
		require.NoError(t, err, dt)
		js, err := json.Marshal(elems)
		require.NoError(t, err, dt)
		back, err := rawFromJSON(dt, []int64{2, 3}, js)
		require.NoError(t, err, "%s: %s", dt, js)
		assert.Equal(t, raw, back, "%s: %s", dt, js)
		if !isFloat(dt) {
			for _, e := range elems {
				assert.Contains(t, []string{"0", "1", "false", "true"}, jsonString(t, e), "%s: random integers are 0 or 1", dt)
			}
		}
	}

	// Nested data, int64 past float64's precision, FP32 exactly.
	raw, err := rawFromJSON("INT64", []int64{2, 1}, json.RawMessage(`[[9007199254740993],[-2]]`))
	require.NoError(t, err)
	assert.Equal(t, int64(9007199254740993), int64(binary.LittleEndian.Uint64(raw)))
	assert.Equal(t, int64(-2), int64(binary.LittleEndian.Uint64(raw[8:])))
	raw, err = rawFromJSON("FP32", []int64{2}, json.RawMessage(`[0.1, -3]`))
	require.NoError(t, err)
	assert.Equal(t, float32(0.1), math.Float32frombits(binary.LittleEndian.Uint32(raw)))
	assert.Equal(t, float32(-3), math.Float32frombits(binary.LittleEndian.Uint32(raw[4:])))
	raw, err = rawFromJSON("BF16", []int64{1}, json.RawMessage(`[1.5]`))
	require.NoError(t, err)
	assert.Equal(t, []byte{0xc0, 0x3f}, raw, "bfloat16 1.5 is 0x3fc0")

	for _, tc := range []struct {
		dt, data string
		shape    []int64
		err      string
	}{
		{"FP32", `[1, 2]`, []int64{3}, "data has 2 elements, shape [3] has 3"},
		{"INT32", `[1.5]`, []int64{1}, "element 0 (1.5) is not an integer in a INT32 tensor"},
		{"INT32", `[true]`, []int64{1}, "element 0 is a boolean in a INT32 tensor"},
		{"FP32", `{"a": 1}`, []int64{1}, "data is not an array"},
		{"FP32", `["x"]`, []int64{1}, "data holds string"},
		{"STRING", `[1]`, []int64{1}, `datatype "STRING" is not one gosr runs`},
		{"FP32", `[1]`, []int64{-1}, "negative dimension"},
	} {
		_, err := rawFromJSON(tc.dt, tc.shape, json.RawMessage(tc.data))
		assert.ErrorContains(t, err, tc.err, "%s %s", tc.dt, tc.data)
	}
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(3, 4)) }

func jsonString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestInputsFromMeta(t *testing.T) {
	meta := &serve.ModelMetadata{Name: "m", Inputs: []serve.TensorMetadata{
		{Name: "INPUT__0", Datatype: "FP32", Shape: []int64{-1, 4}},
		{Name: "INPUT__1", Datatype: "INT64", Shape: []int64{3}},
	}}
	ts, err := inputsFromMeta(meta, map[string][]int64{"INPUT__0": {2, 4}}, false)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, serve.TensorMetadata{Name: "INPUT__0", Datatype: "FP32", Shape: []int64{2, 4}}, ts[0].TensorMetadata)
	assert.Len(t, ts[0].raw, 2*4*4)
	assert.Equal(t, serve.TensorMetadata{Name: "INPUT__1", Datatype: "INT64", Shape: []int64{3}}, ts[1].TensorMetadata)
	assert.Len(t, ts[1].raw, 3*8)
	assert.NotEqual(t, make([]byte, 32), ts[0].raw, "random data")
	again, err := inputsFromMeta(meta, map[string][]int64{"INPUT__0": {2, 4}}, false)
	require.NoError(t, err)
	assert.Equal(t, ts[0].raw, again[0].raw, "seeded: every run sends the same data")

	zero, err := inputsFromMeta(meta, map[string][]int64{"INPUT__0": {1, 4}}, true)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 16), zero[0].raw)

	for _, tc := range []struct {
		shapes map[string][]int64
		err    string
	}{
		{nil, "input INPUT__0 has shape [-1 4]: give its size with -shape INPUT__0:DIM,DIM,..."},
		{map[string][]int64{"INPUT__0": {2}}, "-shape INPUT__0:2: the model declares 2 dimensions ([-1 4])"},
		{map[string][]int64{"INPUT__0": {2, 5}}, "-shape INPUT__0:2,5: dimension 1 is 4 in the model's metadata"},
		{map[string][]int64{"INPUT__0": {2, 4}, "x": {1}}, `-shape x: model "m" has no such input (INPUT__0, INPUT__1)`},
	} {
		_, err := inputsFromMeta(meta, tc.shapes, false)
		assert.ErrorContains(t, err, tc.err, "%v", tc.shapes)
	}
	// [-1]: any rank.
	anyRank := &serve.ModelMetadata{Name: "m", Inputs: []serve.TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{-1}}}}
	ts, err = inputsFromMeta(anyRank, map[string][]int64{"x": {1, 3, 2, 2}}, false)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 2, 2}, ts[0].Shape)
	assert.Len(t, ts[0].raw, 12*4)

	_, err = inputsFromMeta(&serve.ModelMetadata{Name: "m"}, nil, false)
	assert.ErrorContains(t, err, "the metadata lists no inputs")
}

func TestInputsFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"inputs": [
		{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3, 4]]},
		{"name": "mask", "shape": [2], "datatype": "BOOL", "data": [true, false]}]}`), 0o644))
	ts, err := inputsFromFile(good)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, serve.TensorMetadata{Name: "x", Datatype: "FP32", Shape: []int64{2, 2}}, ts[0].TensorMetadata)
	assert.Equal(t, []float32{1, 2, 3, 4}, f32s(ts[0].raw))
	assert.Equal(t, []byte{1, 0}, ts[1].raw)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"inputs": [{"name": "x", "shape": [3], "datatype": "FP32", "data": [1]}]}`), 0o644))
	_, err = inputsFromFile(bad)
	assert.ErrorContains(t, err, `bad.json: input 0 ("x"): data has 1 elements, shape [3] has 3`)
	require.NoError(t, os.WriteFile(bad, []byte(`{"x": 1}`), 0o644))
	_, err = inputsFromFile(bad)
	assert.ErrorContains(t, err, "bad.json: no inputs")
	_, err = inputsFromFile(filepath.Join(dir, "none.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func f32s(raw []byte) []float32 {
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func f32raw(xs []float32) []byte {
	out := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func TestCheckHTTPResponse(t *testing.T) {
	hdr := `{"outputs":[{"name":"y","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}]}`
	body := append([]byte(hdr), f32raw([]float32{1, 2})...)
	for _, tc := range []struct {
		name      string
		body      []byte
		headerLen string
		err       string
	}{
		{"json", []byte(`{"outputs":[{"name":"y","datatype":"FP32","shape":[2,1],"data":[1,2]}]}`), "", ""},
		{"binary", body, strconv.Itoa(len(hdr)), ""},
		{"json short", []byte(`{"outputs":[{"name":"y","datatype":"FP32","shape":[3],"data":[1,2]}]}`), "", "output y: data has 2 elements"},
		{"binary short", body[:len(body)-1], strconv.Itoa(len(hdr)), "has binary_data_size 8 with 7 bytes left"},
		{"binary extra", append(body, 0), strconv.Itoa(len(hdr)), "1 bytes past the outputs' binary data"},
		{"header past the body", body, "9999", "Inference-Header-Content-Length \"9999\""},
		{"no outputs", []byte(`{"outputs":[]}`), "", "no outputs"},
		{"not JSON", []byte(`<html>`), "", "response: invalid character"},
	} {
		metas, err := checkHTTPResponse(tc.body, tc.headerLen)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Len(t, metas, 1, tc.name)
		assert.Equal(t, "y", metas[0].Name, tc.name)
	}
}

func TestCheckGRPCResponse(t *testing.T) {
	out := &inferpb.ModelInferResponse_InferOutputTensor{Name: "y", Datatype: "FP32", Shape: []int64{2}}
	_, err := checkGRPCResponse(&inferpb.ModelInferResponse{Outputs: []*inferpb.ModelInferResponse_InferOutputTensor{out}, RawOutputContents: [][]byte{f32raw([]float32{1, 2})}})
	assert.NoError(t, err)
	_, err = checkGRPCResponse(&inferpb.ModelInferResponse{Outputs: []*inferpb.ModelInferResponse_InferOutputTensor{out}, RawOutputContents: [][]byte{make([]byte, 4)}})
	assert.ErrorContains(t, err, "output y (FP32 [2]) has 4 bytes of raw_output_contents, want 8")
	_, err = checkGRPCResponse(&inferpb.ModelInferResponse{Outputs: []*inferpb.ModelInferResponse_InferOutputTensor{out}})
	assert.ErrorContains(t, err, "neither raw_output_contents nor contents")
	_, err = checkGRPCResponse(&inferpb.ModelInferResponse{})
	assert.ErrorContains(t, err, "no outputs")
}

// fakeServer answers the Open Inference Protocol for one model, "double"
// (y = 2x, FP32, declared shape [-1, 4]), over REST (JSON and binary
// tensors) and gRPC, decoding every request and checking its input
// against want. failEvery > 0 fails every failEvery-th infer with 503 /
// UNAVAILABLE.
type fakeServer struct {
	inferpb.UnimplementedGRPCInferenceServiceServer
	want      []float32
	failEvery int64
	served    atomic.Int64 // infer requests answered with outputs
	bad       atomic.Int64 // infer requests whose input was not want
	live      atomic.Int64 // empty calls: GET /v2/health/live, ServerLive
	n         atomic.Int64
}

func (s *fakeServer) ServerLive(context.Context, *inferpb.ServerLiveRequest) (*inferpb.ServerLiveResponse, error) {
	s.live.Add(1)
	return &inferpb.ServerLiveResponse{Live: true}, nil
}

var fakeMeta = serve.ModelMetadata{Name: "double", Versions: []string{"1"}, Platform: "pytorch_libtorch",
	Inputs:  []serve.TensorMetadata{{Name: "INPUT__0", Datatype: "FP32", Shape: []int64{-1, 4}}},
	Outputs: []serve.TensorMetadata{{Name: "OUTPUT__0", Datatype: "FP32", Shape: []int64{-1, 4}}}}

func (s *fakeServer) fail() bool {
	return s.failEvery > 0 && s.n.Add(1)%s.failEvery == 0
}

func (s *fakeServer) check(shape []int64, x []float32) []float32 {
	if len(shape) != 2 || shape[1] != 4 || int(shape[0]*shape[1]) != len(x) || !assert.ObjectsAreEqual(s.want, x) {
		s.bad.Add(1)
	}
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = 2 * v
	}
	return y
}

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v2/models/double":
		json.NewEncoder(w).Encode(fakeMeta)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v2/health/live":
		s.live.Add(1)
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v2/models/double/infer":
		fail(http.StatusNotFound, "no model at "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	header, rest := body, []byte(nil)
	if hl := r.Header.Get("Inference-Header-Content-Length"); hl != "" {
		n, err := strconv.Atoi(hl)
		if err != nil || n > len(body) {
			fail(http.StatusBadRequest, "bad Inference-Header-Content-Length")
			return
		}
		header, rest = body[:n], body[n:]
	}
	var req struct {
		Inputs []struct {
			Name       string         `json:"name"`
			Shape      []int64        `json:"shape"`
			Datatype   string         `json:"datatype"`
			Parameters map[string]int `json:"parameters"`
			Data       []float32      `json:"data"`
		} `json:"inputs"`
		Parameters map[string]bool `json:"parameters"`
	}
	if err := json.Unmarshal(header, &req); err != nil || len(req.Inputs) != 1 || req.Inputs[0].Name != "INPUT__0" || req.Inputs[0].Datatype != "FP32" {
		fail(http.StatusBadRequest, "want one FP32 input INPUT__0")
		return
	}
	if s.fail() {
		fail(http.StatusServiceUnavailable, "queue full")
		return
	}
	in := req.Inputs[0]
	x := in.Data
	if size, ok := in.Parameters["binary_data_size"]; ok {
		if size != len(rest) {
			fail(http.StatusBadRequest, "binary_data_size does not match the body")
			return
		}
		x = f32s(rest)
	}
	y := s.check(in.Shape, x)
	s.served.Add(1)
	out := map[string]any{"name": "OUTPUT__0", "datatype": "FP32", "shape": in.Shape}
	if req.Parameters["binary_data_output"] {
		out["parameters"] = map[string]int{"binary_data_size": 4 * len(y)}
		hdr, _ := json.Marshal(map[string]any{"model_name": "double", "outputs": []any{out}})
		w.Header().Set("Inference-Header-Content-Length", strconv.Itoa(len(hdr)))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(append(hdr, f32raw(y)...))
		return
	}
	out["data"] = y
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"model_name": "double", "outputs": []any{out}})
}

func (s *fakeServer) ModelMetadata(_ context.Context, r *inferpb.ModelMetadataRequest) (*inferpb.ModelMetadataResponse, error) {
	if r.Name != "double" {
		return nil, status.Errorf(codes.NotFound, "no model %q", r.Name)
	}
	m := &inferpb.ModelMetadataResponse{Name: "double", Versions: []string{"1"}, Platform: "pytorch_libtorch"}
	for _, t := range fakeMeta.Inputs {
		m.Inputs = append(m.Inputs, &inferpb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	for _, t := range fakeMeta.Outputs {
		m.Outputs = append(m.Outputs, &inferpb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	return m, nil
}

func (s *fakeServer) ModelInfer(_ context.Context, r *inferpb.ModelInferRequest) (*inferpb.ModelInferResponse, error) {
	if r.ModelName != "double" || len(r.Inputs) != 1 || len(r.RawInputContents) != 1 || r.Inputs[0].Datatype != "FP32" {
		return nil, status.Error(codes.InvalidArgument, "want one FP32 input in raw_input_contents")
	}
	if s.fail() {
		return nil, status.Error(codes.Unavailable, "queue full")
	}
	y := s.check(r.Inputs[0].Shape, f32s(r.RawInputContents[0]))
	s.served.Add(1)
	return &inferpb.ModelInferResponse{ModelName: "double",
		Outputs:           []*inferpb.ModelInferResponse_InferOutputTensor{{Name: "OUTPUT__0", Datatype: "FP32", Shape: r.Inputs[0].Shape}},
		RawOutputContents: [][]byte{f32raw(y)}}, nil
}

// startFake serves s over HTTP and gRPC on loopback: their addresses.
func startFake(t *testing.T, s *fakeServer) (httpAddr, grpcAddr string) {
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer()
	inferpb.RegisterGRPCInferenceServiceServer(gs, s)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return hs.URL, lis.Addr().String()
}

// srbench load end to end against a server on loopback, each protocol:
// the inputs the server decodes are the ones the client made from the
// metadata, every request succeeds, and the report adds up.
func TestLoadEndToEnd(t *testing.T) {
	want := f32s(mustInputs(t, map[string][]int64{"INPUT__0": {2, 4}})[0].raw)
	// The same data as -input FILE, nested.
	in := filepath.Join(t.TempDir(), "in.json")
	b, err := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "INPUT__0", "datatype": "FP32",
		"shape": []int{2, 4}, "data": [][]float32{want[:4], want[4:]}}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, b, 0o644))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http json", []string{"-protocol", "http", "-shape", "INPUT__0:2,4"}},
		{"http binary", []string{"-protocol", "http", "-binary", "-shape", "INPUT__0:2,4"}},
		{"grpc", []string{"-protocol", "grpc", "-shape", "INPUT__0:2,4"}},
		{"http binary -input", []string{"-protocol", "http", "-binary", "-input", in}},
		{"grpc -input", []string{"-protocol", "grpc", "-input", in}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeServer{want: want}
			httpAddr, grpcAddr := startFake(t, s)
			addr := httpAddr
			if strings.Contains(tc.name, "grpc") {
				addr = grpcAddr
			}
			out := filepath.Join(t.TempDir(), "out.json")
			args := append([]string{addr, "-model", "double", "-concurrency", "1,2",
				"-window", "40ms", "-max-windows", "4", "-stability", "0.5", "-json", out}, tc.args...)
			var f loadFlags
			require.NoError(t, parse("load", &f, args, io.Discard))
			var stdout strings.Builder
			require.NoError(t, f.run(&stdout))

			assert.Zero(t, s.bad.Load(), "requests whose input was not the client's")
			text := stdout.String()
			assert.Contains(t, text, "inputs  INPUT__0 FP32 [2 4]")
			assert.Contains(t, text, "outputs OUTPUT__0 FP32 [2 4]")
			assert.Contains(t, text, "concurrency    infer/s")

			var rep loadReport
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &rep))
			require.Len(t, rep.Results, 2)
			total := 0
			for i, r := range rep.Results {
				assert.Equal(t, []int{1, 2}[i], r.Concurrency)
				assert.Positive(t, r.Requests)
				assert.Zero(t, r.Errors)
				assert.Positive(t, r.Throughput)
				assert.True(t, r.P50Us > 0 && r.P50Us <= r.P90Us && r.P90Us <= r.P95Us && r.P95Us <= r.P99Us, "%+v", r)
				assert.GreaterOrEqual(t, r.Windows, 3)
				assert.LessOrEqual(t, r.Windows, 4)
				assert.Len(t, r.WindowThroughputs, r.Windows)
				assert.Contains(t, text, "\n"+strings.Repeat(" ", 10)+strconv.Itoa(r.Concurrency)+" ", "a row per concurrency")
				total += r.Requests
			}
			// The reported windows are a part of what the server answered
			// (which also counts the warm-up windows and the first request).
			assert.Less(t, int64(total), s.served.Load())
			assert.Equal(t, "double", rep.Model)
			assert.Equal(t, []serve.TensorMetadata{{Name: "OUTPUT__0", Datatype: "FP32", Shape: []int64{2, 4}}}, rep.Outputs)
		})
	}
}

// -floor sends the protocol's empty call instead of infer, and each
// level runs with as many client processors as workers (at most the
// CPUs) unless -procs says otherwise.
func TestLoadFloorAndProcs(t *testing.T) {
	want := f32s(mustInputs(t, map[string][]int64{"INPUT__0": {1, 4}})[0].raw)
	for _, proto := range []string{"http", "grpc"} {
		for _, tc := range []struct {
			args  []string
			floor bool
			procs []int
		}{
			{[]string{"-floor"}, true, []int{1, min(3, runtime.NumCPU())}},
			{[]string{"-procs", "1"}, false, []int{1, 1}},
		} {
			s := &fakeServer{want: want}
			httpAddr, grpcAddr := startFake(t, s)
			addr := map[string]string{"http": httpAddr, "grpc": grpcAddr}[proto]
			before := runtime.GOMAXPROCS(0)
			var f loadFlags
			require.NoError(t, parse("load", &f, append([]string{addr, "-model", "double", "-protocol", proto, "-shape", "INPUT__0:1,4",
				"-concurrency", "1,3", "-window", "30ms", "-max-windows", "3", "-stability", "0.9", "-json", "-"}, tc.args...), io.Discard))
			var stdout strings.Builder
			require.NoError(t, f.run(&stdout), proto)
			assert.Equal(t, before, runtime.GOMAXPROCS(0), "%s: GOMAXPROCS put back", proto)
			var rep loadReport
			require.NoError(t, json.Unmarshal([]byte(stdout.String()), &rep), proto)
			assert.Equal(t, tc.floor, rep.Floor, proto)
			require.Len(t, rep.Results, 2, proto)
			for i, r := range rep.Results {
				assert.Positive(t, r.Requests, proto)
				assert.Zero(t, r.Errors, "%s: %s", proto, r.FirstError)
				assert.Equal(t, tc.procs[i], r.ClientProcs, "%s %v: concurrency %d", proto, tc.args, r.Concurrency)
			}
			if tc.floor {
				assert.Zero(t, s.served.Load(), "%s: -floor sent infer requests", proto)
				assert.Greater(t, s.live.Load(), int64(rep.Results[0].Requests), proto)
			} else {
				assert.Zero(t, s.live.Load(), proto)
				assert.Positive(t, s.served.Load(), proto)
			}
		}
	}
}

func mustInputs(t *testing.T, shapes map[string][]int64) []loadTensor {
	ts, err := inputsFromMeta(&fakeMeta, shapes, false)
	require.NoError(t, err)
	return ts
}

// Failed requests are counted, not fatal, and the first one's message is
// reported; a first request the server refuses ends load with its
// message.
func TestLoadErrors(t *testing.T) {
	want := f32s(mustInputs(t, map[string][]int64{"INPUT__0": {1, 4}})[0].raw)
	for _, proto := range []string{"http", "grpc"} {
		s := &fakeServer{want: want, failEvery: 3}
		httpAddr, grpcAddr := startFake(t, s)
		addr := map[string]string{"http": httpAddr, "grpc": grpcAddr}[proto]
		var f loadFlags
		require.NoError(t, parse("load", &f, []string{addr, "-model", "double", "-protocol", proto, "-shape", "INPUT__0:1,4",
			"-window", "30ms", "-max-windows", "3", "-json", "-"}, io.Discard))
		var stdout strings.Builder
		require.NoError(t, f.run(&stdout), proto)
		var rep loadReport
		require.NoError(t, json.Unmarshal([]byte(stdout.String()), &rep), proto)
		require.Len(t, rep.Results, 1)
		r := rep.Results[0]
		assert.Positive(t, r.Errors, proto)
		assert.Positive(t, r.Requests, proto)
		assert.InDelta(t, 0.5, float64(r.Errors)/float64(r.Requests), 0.1, "%s: one failure in three", proto)
		assert.Contains(t, r.FirstError, "queue full", proto)

		for _, tc := range []struct{ model, err string }{
			{"nope", "no model"},
		} {
			var f loadFlags
			require.NoError(t, parse("load", &f, []string{addr, "-model", tc.model, "-protocol", proto}, io.Discard))
			err := f.run(io.Discard)
			assert.ErrorContains(t, err, tc.err, proto)
		}
	}

	// The first request refused: its status and message.
	s := &fakeServer{want: want}
	httpAddr, _ := startFake(t, s)
	var f loadFlags
	require.NoError(t, parse("load", &f, []string{httpAddr, "-model", "double", "-shape", "INPUT__0:3,4", "-window", "30ms"}, io.Discard))
	s.failEvery = 1
	err := f.run(io.Discard)
	assert.ErrorContains(t, err, "the first request: POST /v2/models/double/infer: 503 Service Unavailable: queue full")
}

// srbench load against gosr's own server (package serve) on loopback,
// serving the mlp fixture: every protocol runs without a failed request,
// and the server's refusals reach the user with its message.
func TestLoadGosrServer(t *testing.T) {
	repo := t.TempDir()
	for _, f := range []struct{ src, dst string }{
		{"../../testdata/pt/mlp.scripted_frozen.pt", "model.pt"},
		{"../../testdata/pt/mlp.inputs.pt", "inputs.pt"},
	} {
		b, err := os.ReadFile(f.src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(repo, "mlp", "1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "mlp", "1", f.dst), b, 0o644))
	}
	s, err := serve.New(context.Background(), serve.Options{ModelRepository: repo, Instances: 2,
		HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
	})

	for _, tc := range []struct {
		name, addr string
		args       []string
	}{
		{"http json", s.Addr("http"), nil},
		{"http binary", "http://" + s.Addr("http"), []string{"-binary"}},
		{"grpc", s.Addr("grpc"), []string{"-protocol", "grpc"}},
	} {
		var f loadFlags
		args := append([]string{tc.addr, "-model", "mlp", "-version", "1", "-concurrency", "1,2", "-window", "40ms",
			"-max-windows", "4", "-stability", "0.5", "-json", "-"}, tc.args...)
		require.NoError(t, parse("load", &f, args, io.Discard), tc.name)
		var stdout strings.Builder
		require.NoError(t, f.run(&stdout), tc.name)
		var rep loadReport
		require.NoError(t, json.Unmarshal([]byte(stdout.String()), &rep), tc.name)
		assert.Equal(t, []serve.TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}}, rep.Inputs, tc.name)
		assert.Equal(t, []serve.TensorMetadata{{Name: "OUTPUT__0", Datatype: "FP32", Shape: []int64{1, 10}}}, rep.Outputs, tc.name)
		require.Len(t, rep.Results, 2, tc.name)
		for _, r := range rep.Results {
			assert.Zero(t, r.Errors, "%s: %s", tc.name, r.FirstError)
			assert.Positive(t, r.Requests, tc.name)
			assert.Positive(t, r.P50Us, tc.name)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"unknown model http", []string{s.Addr("http"), "-model", "nope"}, "GET /v2/models/nope: 404 Not Found"},
		{"unknown model grpc", []string{s.Addr("grpc"), "-model", "nope", "-protocol", "grpc"}, "ModelMetadata nope: NotFound"},
		{"unknown version", []string{s.Addr("http"), "-model", "mlp", "-version", "9"}, "404 Not Found"},
		{"shape off the metadata", []string{s.Addr("http"), "-model", "mlp", "-shape", "x:2,64"}, "-shape x:2,64: dimension 0 is 1"},
	} {
		var f loadFlags
		require.NoError(t, parse("load", &f, tc.args, io.Discard), tc.name)
		assert.ErrorContains(t, f.run(io.Discard), tc.err, tc.name)
	}
}

// The HTTP sender keeps one connection across requests and error
// answers, dials again after the server closes it or after a failure,
// and gives up on a silent server at the timeout.
func TestHTTPSenderConnections(t *testing.T) {
	var conns atomic.Int64
	var mode atomic.Int32 // 0 answer, 1 answer and close, 2 error answer, 3 hang
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch mode.Load() {
		case 1:
			w.Header().Set("Connection", "close")
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"queue full"}`))
			return
		case 3:
			<-release
			return
		}
		w.Write([]byte(`{"outputs":[]}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	defer close(release)

	c, err := newHTTPClient(srv.URL, "m", "", false, false, 1, 200*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, c.prepare(mustInputs(t, map[string][]int64{"INPUT__0": {1, 4}})))
	s, err := c.newSender()
	require.NoError(t, err)
	defer s.close()
	ctx := context.Background()
	for range 5 {
		_, err := s.infer(ctx, false)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, conns.Load(), "one kept-alive connection")
	mode.Store(2)
	for range 3 {
		_, err := s.infer(ctx, false)
		require.ErrorContains(t, err, "503 Service Unavailable: queue full")
	}
	assert.EqualValues(t, 1, conns.Load(), "an error answer keeps the connection")
	mode.Store(1)
	for range 3 {
		_, err := s.infer(ctx, false)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 3, conns.Load(), "Connection: close: the kept connection, then a new one each time")
	mode.Store(3)
	t0 := time.Now()
	_, err = s.infer(ctx, false)
	require.Error(t, err)
	assert.Less(t, time.Since(t0), 2*time.Second, "the timeout ends a hung request")
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	t0 = time.Now()
	_, err = s.infer(cctx, false)
	require.Error(t, err)
	assert.Less(t, time.Since(t0), 150*time.Millisecond, "a cancelled context ends a request at once")
	mode.Store(0)
	_, err = s.infer(ctx, false)
	require.NoError(t, err, "a fresh connection after the failures")
}
