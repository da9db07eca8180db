package serve_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/inferpb"
)

// The server's cost per request over loopback, client included, beside
// a do-nothing handler on the same client (the floor: loopback, net/http
// and the scheduler). Run with -cpu 2 for the figures in serving.md.

func BenchmarkHTTPFloor(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"model_name":"mlp","model_version":"1","outputs":[]}`))
	})}
	go srv.Serve(l)
	defer srv.Close()
	benchPost(b, "http://"+l.Addr().String()+"/v2/models/mlp/infer", mlpBody(b, samples(b, td+"pt/mlp.inputs.pt")[0]))
}

func BenchmarkHTTPInfer(b *testing.B) {
	ts := startServer(b, serve.Options{Instances: 1}, mlpModel)
	benchPost(b, ts.base+"/v2/models/mlp/infer", mlpBody(b, samples(b, td+"pt/mlp.inputs.pt")[0]))
}

func benchPost(b *testing.B, url string, body []byte) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := c.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

func BenchmarkGRPCInfer(b *testing.B) {
	ts := startServer(b, serve.Options{Instances: 1}, mlpModel)
	x := samples(b, td+"pt/mlp.inputs.pt")[0]
	req := &inferpb.ModelInferRequest{ModelName: "mlp",
		Inputs:           []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 64}}},
		RawInputContents: [][]byte{rawOf(x)}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := ts.grpc.ModelInfer(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGRPCFloor: an empty call (ServerLive) on the same
// connection: grpc-go's own round trip.
func BenchmarkGRPCFloor(b *testing.B) {
	ts := startServer(b, serve.Options{Instances: 1}, mlpModel)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := ts.grpc.ServerLive(ctx, &inferpb.ServerLiveRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPHandler: the infer handler alone, no network: gosr's own
// CPU per REST request (decode, run, encode, metrics). The JSON numbers
// are float32's shortest text (as Go's encoding/json and srbench load
// write them) or float64's 17 digits (as Python clients send a float32
// tensor's tolist()).
func BenchmarkHTTPHandler(b *testing.B) {
	ts := startServer(b, serve.Options{Instances: 1}, mlpModel)
	h := ts.HTTPHandler()
	x := samples(b, td+"pt/mlp.inputs.pt")[0]
	for _, bc := range []struct {
		name string
		data any
	}{{"shortest", x.F32()}, {"17digits", x.Float64s()}} {
		body := mustJSON(b, map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": shape64(x), "data": bc.data}}})
		b.Run(bc.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for range b.N {
				r, _ := http.NewRequest("POST", "/v2/models/mlp/infer", bytes.NewReader(body))
				r.ContentLength = int64(len(body))
				clear(w.h)
				h.ServeHTTP(w, r)
				if w.code != 200 {
					b.Fatal(w.code)
				}
			}
		})
	}
}

type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(c int)           { w.code = c }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
