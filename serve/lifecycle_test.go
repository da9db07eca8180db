package serve_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/inferpb"
)

func mlpBody(t testing.TB, x *ivalue.Tensor) []byte {
	return mustJSON(t, map[string]any{"inputs": []any{jsonInput("x", x)}})
}

// spinBody asks the spin model for n tanh steps over a 1,000-element x.
func spinBody(t testing.TB, n int) []byte {
	return mustJSON(t, map[string]any{"inputs": []any{
		map[string]any{"name": "x", "datatype": "FP32", "shape": []int{1000}, "data": make([]float32, 1000)},
		map[string]any{"name": "n", "datatype": "INT64", "shape": []int{}, "data": []int{n}},
	}})
}

// TestReloadUnderLoad: clients keep sending while the model is reloaded
// again and again: no request fails and every answer is right; a load
// that fails keeps the old version serving.
func TestReloadUnderLoad(t *testing.T) {
	ts := startServer(t, serve.Options{}, mlpModel)
	x := samples(t, td+"pt/mlp.inputs.pt")[0]
	want := samples(t, td+"pt/mlp.expected.pt")[0]
	body := mlpBody(t, x)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var okCount, failCount atomic.Int64
	var firstFail atomic.Value
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, _, b := ts.do(t, "POST", "/v2/models/mlp/infer", body, nil)
				if code != 200 {
					failCount.Add(1)
					firstFail.CompareAndSwap(nil, fmt.Sprintf("%d %s", code, b))
					continue
				}
				var r jsonInfer
				if err := json.Unmarshal(b, &r); err != nil {
					failCount.Add(1)
					continue
				}
				assertClose(t, want, floats(t, r.Outputs[0].Data), "during reload")
				okCount.Add(1)
			}
		}()
	}
	for range 5 {
		code, _, b := ts.do(t, "POST", "/v2/repository/models/mlp/load", nil, nil)
		require.Equal(t, 200, code, string(b))
		time.Sleep(50 * time.Millisecond)
	}
	// A broken file: the load fails, the old version serves on.
	mp := filepath.Join(ts.repo, "mlp", "1", "model.pt")
	good, err := os.ReadFile(mp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mp, []byte("not a zip"), 0o644))
	code, _, b := ts.do(t, "POST", "/v2/repository/models/mlp/load", nil, nil)
	assert.NotEqual(t, 200, code)
	assert.Contains(t, string(b), "model.pt")
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	assert.Zero(t, failCount.Load(), "first failure: %v", firstFail.Load())
	assert.Greater(t, okCount.Load(), int64(20))

	var idx []serve.IndexEntry
	code, _, b = ts.do(t, "POST", "/v2/repository/index", nil, nil)
	require.Equal(t, 200, code)
	require.NoError(t, json.Unmarshal(b, &idx))
	require.Len(t, idx, 1)
	assert.Equal(t, serve.StateReady, idx[0].State)
	assert.Contains(t, idx[0].Reason, "last load failed")

	// Unload: requests are refused; load: served again.
	require.NoError(t, os.WriteFile(mp, good, 0o644))
	code, _, _ = ts.do(t, "POST", "/v2/repository/models/mlp/unload", nil, nil)
	require.Equal(t, 200, code)
	code, _, b = ts.do(t, "POST", "/v2/models/mlp/infer", body, nil)
	assert.Equal(t, 503, code, string(b))
	assert.Contains(t, string(b), "not ready")
	_, err = ts.grpc.RepositoryModelLoad(context.Background(), &inferpb.RepositoryModelLoadRequest{ModelName: "mlp"})
	require.NoError(t, err)
	code, _, _ = ts.do(t, "POST", "/v2/models/mlp/infer", body, nil)
	assert.Equal(t, 200, code)
	gi, err := ts.grpc.RepositoryIndex(context.Background(), &inferpb.RepositoryIndexRequest{Ready: true})
	require.NoError(t, err)
	require.Len(t, gi.Models, 1)
	assert.Equal(t, "READY", gi.Models[0].State)
	_, err = ts.grpc.RepositoryModelUnload(context.Background(), &inferpb.RepositoryModelUnloadRequest{ModelName: "nope"})
	assert.Equal(t, codes.NotFound, status.Code(err))
}

// TestQueueFull: with one runtime and a queue of two, a third request
// while two run slowly is answered 503 / UNAVAILABLE at once.
func TestQueueFull(t *testing.T) {
	ts := startServer(t, serve.Options{Instances: 1, MaxQueueSize: 2}, spinModel)
	slow := spinBody(t, 2_000_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.base+"/v2/models/spin/infer", strings.NewReader(string(slow)))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	require.Eventually(t, func() bool { return pending(t, ts, "spin") == 2 }, 5*time.Second, 5*time.Millisecond)
	start := time.Now()
	code, _, b := ts.do(t, "POST", "/v2/models/spin/infer", spinBody(t, 1), nil)
	assert.Equal(t, 503, code, string(b))
	assert.Contains(t, string(b), "queue is full")
	assert.Less(t, time.Since(start), time.Second, "refused at once")
	_, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "spin",
		Inputs: []*inferpb.ModelInferRequest_InferInputTensor{
			{Name: "x", Datatype: "FP32", Shape: []int64{1}, Contents: &inferpb.InferTensorContents{Fp32Contents: []float32{0}}},
			{Name: "n", Datatype: "INT64", Shape: []int64{}, Contents: &inferpb.InferTensorContents{Int64Contents: []int64{1}}}}})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	cancel() // the two slow ones go away
	wg.Wait()
	require.Eventually(t, func() bool { return pending(t, ts, "spin") == 0 }, 10*time.Second, 10*time.Millisecond)
	code, _, b = ts.do(t, "POST", "/v2/models/spin/infer", spinBody(t, 1), nil)
	assert.Equal(t, 200, code, string(b))
	m := scrape(t, ts)
	assert.Contains(t, m, `nv_inference_request_failure{model="spin",reason="REJECTED",version="1"} 2`)
	assert.Contains(t, m, `nv_inference_request_failure{model="spin",reason="CANCELED",version="1"} 2`)
}

func pending(t testing.TB, ts *testServer, model string) int {
	m := scrape(t, ts)
	var n int
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, `nv_inference_pending_request_count{model="`+model+`"`) {
			fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%d", &n)
		}
	}
	return n
}

func scrape(t testing.TB, ts *testServer) string {
	resp, err := http.Get("http://" + ts.Addr("metrics") + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestCancelledRequest: a client that gives up (deadline or closed
// connection) stops its run; the runtime serves the next request at once.
func TestCancelledRequest(t *testing.T) {
	ts := startServer(t, serve.Options{Instances: 1}, spinModel)
	// HTTP: the client's context ends, the connection closes.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", ts.base+"/v2/models/spin/infer", strings.NewReader(string(spinBody(t, 100_000_000))))
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)
	// The protocol's timeout parameter (microseconds).
	start := time.Now()
	body := strings.Replace(string(spinBody(t, 100_000_000)), `{"inputs"`, `{"parameters":{"timeout":50000},"inputs"`, 1)
	code, _, b := ts.do(t, "POST", "/v2/models/spin/infer", []byte(body), nil)
	assert.Equal(t, 504, code, string(b))
	assert.Less(t, time.Since(start), 3*time.Second)
	// gRPC: the deadline travels with the call.
	gctx, gcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer gcancel()
	_, err = ts.grpc.ModelInfer(gctx, &inferpb.ModelInferRequest{ModelName: "spin",
		Inputs: []*inferpb.ModelInferRequest_InferInputTensor{
			{Name: "x", Datatype: "FP32", Shape: []int64{1}, Contents: &inferpb.InferTensorContents{Fp32Contents: []float32{0}}},
			{Name: "n", Datatype: "INT64", Shape: []int64{}, Contents: &inferpb.InferTensorContents{Int64Contents: []int64{100_000_000}}}}})
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	// The one runtime is free again soon: a short request gets through.
	start = time.Now()
	code, _, b = ts.do(t, "POST", "/v2/models/spin/infer", spinBody(t, 3), nil)
	assert.Equal(t, 200, code, string(b))
	assert.Less(t, time.Since(start), 3*time.Second)
	require.Eventually(t, func() bool {
		return strings.Contains(scrape(t, ts), `nv_inference_request_failure{model="spin",reason="CANCELED",version="1"} 3`)
	}, 5*time.Second, 10*time.Millisecond)
}

// TestDrain: Shutdown lets a request in flight finish, refuses new ones
// and then stops.
func TestDrain(t *testing.T) {
	ts := startServer(t, serve.Options{Instances: 1}, spinModel)
	done := make(chan int, 1)
	go func() {
		code, _, _ := ts.do(t, "POST", "/v2/models/spin/infer", spinBody(t, 30_000), nil)
		done <- code
	}()
	require.Eventually(t, func() bool { return pending(t, ts, "spin") == 1 }, 5*time.Second, 2*time.Millisecond)
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shut <- ts.Shutdown(ctx)
	}()
	require.Eventually(t, func() bool { return !ts.Ready() }, time.Second, time.Millisecond)
	assert.Equal(t, 200, <-done, "the request in flight finished")
	require.NoError(t, <-shut)
	_, err := http.Post(ts.base+"/v2/models/spin/infer", "application/json", strings.NewReader(string(spinBody(t, 1))))
	assert.Error(t, err, "the listener is closed")
}

// TestConcurrentClientsMatchInProcess: many clients over both protocols
// get what an in-process Run gives for their own inputs.
func TestConcurrentClientsMatchInProcess(t *testing.T) {
	ts := startServer(t, serve.Options{Instances: 2}, pairModel)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				a := ivalue.F32Tensor([]float32{float32(c), float32(i), 1.5, -2, 3, float32(c * i)}, 2, 3)
				b := ivalue.F32Tensor([]float32{0.5, float32(-c), 2, float32(i), 1, 7}, 2, 3)
				want := inProcess(t, td+"serve/pair.pt", a, b)
				if c%2 == 0 {
					code, _, body := ts.do(t, "POST", "/v2/models/pair/infer", mustJSON(t, map[string]any{"inputs": []any{jsonInput("a", a), jsonInput("INPUT__1", b)}}), nil)
					require.Equal(t, 200, code, string(body))
					var r jsonInfer
					require.NoError(t, json.Unmarshal(body, &r))
					require.Len(t, r.Outputs, 2)
					for k := range 2 {
						assert.Equal(t, want[k].Float64s(), floats(t, r.Outputs[k].Data))
					}
				} else {
					resp, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "pair",
						Inputs: []*inferpb.ModelInferRequest_InferInputTensor{
							{Name: "a", Datatype: "FP32", Shape: []int64{2, 3}}, {Name: "b", Datatype: "FP32", Shape: []int64{2, 3}}},
						RawInputContents: [][]byte{rawOf(a), rawOf(b)}})
					require.NoError(t, err)
					for k := range 2 {
						assert.Equal(t, rawOf(want[k]), resp.RawOutputContents[k])
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestDynamicBatching: concurrent requests through a model with
// dynamic_batching are run together (fewer executions than requests)
// and each gets what running it alone in process gives.
func TestDynamicBatching(t *testing.T) {
	cfg := `
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 64 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 10 ] } ]
instance_group [ { count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 20000 preferred_batch_size: [ 8 ] }
`
	m := mlpModel
	m.config = cfg
	m.extra = nil
	ts := startServer(t, serve.Options{}, m)
	const clients, each = 16, 5
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rows := 1 + (c+i)%2
				data := make([]float32, rows*64)
				for k := range data {
					data[k] = float32((c*7+i*3+k)%23)/11 - 1
				}
				x := ivalue.F32Tensor(data, rows, 64)
				want := inProcess(t, m.src, x)[0]
				var got []float64
				switch c % 3 {
				case 0:
					code, _, b := ts.do(t, "POST", "/v2/models/mlp/infer", mustJSON(t, map[string]any{"inputs": []any{jsonInput("x", x)}}), nil)
					require.Equal(t, 200, code, string(b))
					var r jsonInfer
					require.NoError(t, json.Unmarshal(b, &r))
					assert.Equal(t, []int64{int64(rows), 10}, r.Outputs[0].Shape)
					got = floats(t, r.Outputs[0].Data)
				case 1: // typed contents in, typed out
					resp, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "mlp",
						Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{int64(rows), 64},
							Contents: &inferpb.InferTensorContents{Fp32Contents: data}}}})
					require.NoError(t, err)
					for _, f := range resp.Outputs[0].Contents.Fp32Contents {
						got = append(got, float64(f))
					}
				default:
					resp, err := ts.grpc.ModelInfer(context.Background(), &inferpb.ModelInferRequest{ModelName: "mlp",
						Inputs:           []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{int64(rows), 64}}},
						RawInputContents: [][]byte{rawOf(x)}})
					require.NoError(t, err)
					assert.Equal(t, []int64{int64(rows), 10}, resp.Outputs[0].Shape)
					for k := 0; k < len(resp.RawOutputContents[0]); k += 4 {
						got = append(got, float64(math.Float32frombits(binary.LittleEndian.Uint32(resp.RawOutputContents[0][k:]))))
					}
				}
				assertClose(t, want, got, fmt.Sprintf("client %d request %d", c, i))
			}
		}()
	}
	wg.Wait()
	metrics := scrape(t, ts)
	var execs, success float64
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, `nv_inference_exec_count{model="mlp"`) {
			fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%g", &execs)
		}
		if strings.HasPrefix(line, `nv_inference_request_success{model="mlp"`) {
			fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%g", &success)
		}
	}
	assert.Equal(t, float64(clients*each), success)
	assert.Less(t, execs, success/2, "requests were batched")
	assert.Contains(t, metrics, `gosr_inference_batch_rows_bucket{model="mlp",version="1",le="8"} `)
}

// TestHostileClients: a body announced as 1 GB is refused before it is
// read, a client that stalls mid-body is cut off by the read timeout,
// and the server serves on.
func TestHostileClients(t *testing.T) {
	ts := startServer(t, serve.Options{ReadTimeout: 300 * time.Millisecond, MaxRequestBytes: 1 << 20}, mlpModel)
	addr := ts.Addr("http")

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n{\"inputs\":")
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, 413, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(b), "1073741824-byte body is over")
	assert.Less(t, time.Since(start), 5*time.Second)

	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	fmt.Fprintf(slow, "POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"inputs\":")
	start = time.Now()
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, _ := io.ReadAll(slow) // the server answers (or not) and closes
	assert.Less(t, time.Since(start), 5*time.Second, "cut off by the read timeout")
	if len(rest) > 0 {
		assert.Contains(t, string(rest), "400", "an answer, if any, is a 400")
	}

	x := samples(t, td+"pt/mlp.inputs.pt")[0]
	code, _, body := ts.do(t, "POST", "/v2/models/mlp/infer", mlpBody(t, x), nil)
	assert.Equal(t, 200, code, string(body))
}
