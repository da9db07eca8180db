package serve

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gosr/gosr/serve/inferpb"
)

// fuzzServer is a server without models: the decoders need only its
// options.
func fuzzServer() *Server {
	o := Options{MaxRequestBytes: 1 << 20}
	o.fill()
	return &Server{opts: o}
}

// checkDecoded asserts what a decoder promises of a request it accepts:
// every input's tensor has the datatype and shape it was declared with.
func checkDecoded(t *testing.T, req *InferRequest) {
	for _, in := range req.Inputs {
		dt, err := DTypeOf(in.Datatype)
		if err != nil || in.Data.DType() != dt {
			t.Fatalf("input %q: datatype %q decoded as %s", in.Name, in.Datatype, in.Data.DType())
		}
		if len(in.Shape) != in.Data.Dim() {
			t.Fatalf("input %q: shape %v decoded as %v", in.Name, in.Shape, in.Data.Sizes())
		}
		for i, d := range in.Shape {
			if int64(in.Data.Size(i)) != d {
				t.Fatalf("input %q: shape %v decoded as %v", in.Name, in.Shape, in.Data.Sizes())
			}
		}
		if in.Data.Nbytes() > 1<<20 {
			t.Fatalf("input %q: %d bytes past the 1 MiB limit", in.Name, in.Data.Nbytes())
		}
	}
}

// FuzzDecodeHTTP: any body, with or without the binary extension's
// header, decodes or is refused with an *Error; nothing panics.
func FuzzDecodeHTTP(f *testing.F) {
	f.Add([]byte(`{"id":"1","inputs":[{"name":"x","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}`), -1)
	f.Add([]byte(`{"inputs":[{"name":"x","shape":[2,2],"datatype":"INT64","data":[[1,2],[3,4]]}],"outputs":[{"name":"y","parameters":{"binary_data":true}}]}`), -1)
	f.Add([]byte(`{"inputs":[{"name":"b","shape":[2],"datatype":"BOOL","data":[true,false]}],"parameters":{"binary_data_output":true,"timeout":100}}`), -1)
	hdr := []byte(`{"inputs":[{"name":"x","shape":[2],"datatype":"FP16","parameters":{"binary_data_size":4}}]}`)
	f.Add(append(append([]byte(nil), hdr...), 0, 60, 0, 188), len(hdr))
	f.Add([]byte(`{"inputs":[{"name":"x","shape":[3],"datatype":"UINT8","data":[0,255,256]}]}`), -1)
	f.Add([]byte(`{"inputs":[{"name":"x","shape":[],"datatype":"FP64","data":1e308}]}`), -1)
	s := fuzzServer()
	f.Fuzz(func(t *testing.T, body []byte, hl int) {
		r, err := http.NewRequest("POST", "/v2/models/m/infer", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if hl >= 0 {
			r.Header.Set(headerLen, strconv.Itoa(hl))
		}
		req, err := s.decodeHTTP(r, body)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%T is not an *Error: %v", err, err)
			}
			return
		}
		checkDecoded(t, &req.InferRequest)
		// What decodes encodes: the response writer takes any tensor.
		resp := &InferResponse{Model: "m", Version: "1", ID: req.ID}
		for _, in := range req.Inputs {
			resp.Outputs = append(resp.Outputs, InferOutput{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: in.Data, Binary: req.BinaryOutputs})
		}
		var out bytes.Buffer
		encodeHTTP(&out, resp)
	})
}

// FuzzDecodeGRPC: any ModelInferRequest message decodes or is refused
// with an *Error.
func FuzzDecodeGRPC(f *testing.F) {
	add := func(m *inferpb.ModelInferRequest) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	add(&inferpb.ModelInferRequest{ModelName: "m", Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 2}}},
		RawInputContents: [][]byte{{0, 0, 128, 63, 0, 0, 0, 64}}})
	add(&inferpb.ModelInferRequest{ModelName: "m", Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "INT8", Shape: []int64{2},
		Contents: &inferpb.InferTensorContents{IntContents: []int32{-1, 127}}}}})
	add(&inferpb.ModelInferRequest{ModelName: "m", Inputs: []*inferpb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "BOOL", Shape: []int64{1},
		Contents: &inferpb.InferTensorContents{BoolContents: []bool{true}}}}})
	s := fuzzServer()
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m inferpb.ModelInferRequest
		if proto.Unmarshal(msg, &m) != nil {
			return
		}
		req, _, err := s.decodeGRPC(&m)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%T is not an *Error: %v", err, err)
			}
			return
		}
		checkDecoded(t, req)
		for _, in := range req.Inputs {
			typedContents(in.Data)
		}
	})
}
