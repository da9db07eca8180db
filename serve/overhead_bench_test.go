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
