package serve

import (
	"context"
	"math"
	"runtime"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/serve/inferpb"
)

// The gRPC side of the protocol: inference.GRPCInferenceService.

// GRPCServer is a grpc.Server with the inference service registered.
// Start serves it on GRPCAddr.
func (s *Server) GRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	max := int(min(s.opts.MaxRequestBytes, math.MaxInt32))
	// Fixed flow-control windows, large enough for a batch of images in
	// flight, instead of grpc-go's estimate from pings: that sends a ping
	// (and gets its ack) after every request's data, a third TCP segment
	// and wake-up per request, and it starts each connection at 64 KB,
	// which a 600 KB image crosses in ten window updates. resnet18 at
	// concurrency 8 (docs/serving.md): +2% throughput, p99 -30%.
	// Stream workers, one a processor, take each new stream's handler
	// where grpc-go would start a goroutine per request (it still starts
	// one when all are busy, so a long inference never queues a short
	// one): the mlp's p50 at concurrency 1 over gRPC about 9% lower
	// (docs/serving.md).
	g := grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(max), grpc.MaxSendMsgSize(math.MaxInt32),
		grpc.InitialWindowSize(GRPCStreamWindow), grpc.InitialConnWindowSize(GRPCConnWindow),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0)))}, opts...)...)
	inferpb.RegisterGRPCInferenceServiceServer(g, &grpcService{s: s})
	// grpc.health.v1 too, for probes and load balancers that speak it:
	// SERVING until the server drains.
	healthpb.RegisterHealthServer(g, s.health)
	return g
}

// The HTTP/2 flow-control windows of the server's gRPC connections
// (srbench load's client sets the same).
const (
	GRPCStreamWindow = 4 << 20
	GRPCConnWindow   = 16 << 20
)

type grpcService struct {
	inferpb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

func grpcError(err error) error {
	e := asError(err)
	return status.Error(e.Code.GRPCCode(), e.Msg)
}

func (g *grpcService) ServerLive(context.Context, *inferpb.ServerLiveRequest) (*inferpb.ServerLiveResponse, error) {
	return &inferpb.ServerLiveResponse{Live: g.s.Live()}, nil
}

func (g *grpcService) ServerReady(context.Context, *inferpb.ServerReadyRequest) (*inferpb.ServerReadyResponse, error) {
	return &inferpb.ServerReadyResponse{Ready: g.s.Ready()}, nil
}

func (g *grpcService) ModelReady(_ context.Context, r *inferpb.ModelReadyRequest) (*inferpb.ModelReadyResponse, error) {
	return &inferpb.ModelReadyResponse{Ready: g.s.ModelReady(r.Name, r.Version)}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *inferpb.ServerMetadataRequest) (*inferpb.ServerMetadataResponse, error) {
	return &inferpb.ServerMetadataResponse{Name: "gosr", Version: Version, Extensions: Extensions}, nil
}

func (g *grpcService) ModelMetadata(_ context.Context, r *inferpb.ModelMetadataRequest) (*inferpb.ModelMetadataResponse, error) {
	md, err := g.s.Metadata(r.Name, r.Version)
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &inferpb.ModelMetadataResponse{Name: md.Name, Versions: md.Versions, Platform: md.Platform}
	for _, t := range md.Inputs {
		resp.Inputs = append(resp.Inputs, &inferpb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	for _, t := range md.Outputs {
		resp.Outputs = append(resp.Outputs, &inferpb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	return resp, nil
}

func (g *grpcService) RepositoryIndex(_ context.Context, r *inferpb.RepositoryIndexRequest) (*inferpb.RepositoryIndexResponse, error) {
	idx, err := g.s.Index(r.Ready)
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &inferpb.RepositoryIndexResponse{}
	for _, e := range idx {
		resp.Models = append(resp.Models, &inferpb.RepositoryIndexResponse_ModelIndex{Name: e.Name, Version: e.Version, State: e.State, Reason: e.Reason})
	}
	return resp, nil
}

func (g *grpcService) RepositoryModelLoad(ctx context.Context, r *inferpb.RepositoryModelLoadRequest) (*inferpb.RepositoryModelLoadResponse, error) {
	if err := g.s.LoadModel(ctx, r.ModelName); err != nil {
		return nil, grpcError(err)
	}
	return &inferpb.RepositoryModelLoadResponse{}, nil
}

func (g *grpcService) RepositoryModelUnload(_ context.Context, r *inferpb.RepositoryModelUnloadRequest) (*inferpb.RepositoryModelUnloadResponse, error) {
	if err := g.s.UnloadModel(r.ModelName); err != nil {
		return nil, grpcError(err)
	}
	return &inferpb.RepositoryModelUnloadResponse{}, nil
}

func (g *grpcService) ModelInfer(ctx context.Context, r *inferpb.ModelInferRequest) (*inferpb.ModelInferResponse, error) {
	req, raw, err := g.s.decodeGRPC(r)
	if err != nil {
		return nil, grpcError(err)
	}
	resp, err := g.s.Infer(ctx, req)
	if err != nil {
		return nil, grpcError(err)
	}
	out := &inferpb.ModelInferResponse{ModelName: resp.Model, ModelVersion: resp.Version, Id: resp.ID}
	for _, o := range resp.Outputs {
		t := &inferpb.ModelInferResponse_InferOutputTensor{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		if raw {
			out.RawOutputContents = append(out.RawOutputContents, rawBytes(o.Data))
		} else {
			t.Contents = typedContents(o.Data)
		}
		out.Outputs = append(out.Outputs, t)
	}
	return out, nil
}

// decodeGRPC decodes a ModelInferRequest. raw reports whether the
// answer should be raw too: it is, unless every input came typed (the
// protocol lets the server choose; raw is what Triton answers).
func (s *Server) decodeGRPC(r *inferpb.ModelInferRequest) (*InferRequest, bool, error) {
	req := &InferRequest{Model: r.ModelName, Version: r.ModelVersion, ID: r.Id}
	if len(r.RawInputContents) > 0 && len(r.RawInputContents) != len(r.Inputs) {
		return nil, false, errorf(CodeInvalidArgument, "%d raw_input_contents for %d inputs", len(r.RawInputContents), len(r.Inputs))
	}
	for i, in := range r.Inputs {
		dt, err := DTypeOf(in.Datatype)
		if err != nil {
			return nil, false, errorf(CodeInvalidArgument, "input %q: %w", in.Name, err)
		}
		var t *ivalue.Tensor
		if len(r.RawInputContents) > 0 {
			if in.Contents != nil {
				return nil, false, errorf(CodeInvalidArgument, "input %q has contents and raw_input_contents both", in.Name)
			}
			t, err = tensorFromRaw(in.Name, dt, in.Shape, r.RawInputContents[i], s.opts.MaxRequestBytes)
		} else {
			t, err = fromContents(in.Name, dt, in.Shape, in.Contents, s.opts.MaxRequestBytes)
		}
		if err != nil {
			return nil, false, err
		}
		req.Inputs = append(req.Inputs, InferInput{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: t})
	}
	for _, o := range r.Outputs {
		req.Outputs = append(req.Outputs, RequestedOutput{Name: o.Name})
	}
	return req, len(r.RawInputContents) > 0 || len(r.Inputs) == 0, nil
}

// fromContents makes a tensor from typed contents.
func fromContents(name string, dt ivalue.DType, shape []int64, c *inferpb.InferTensorContents, maxBytes int64) (*ivalue.Tensor, error) {
	t, err := newTensor(dt, shape, maxBytes)
	if err != nil {
		return nil, errorf(CodeInvalidArgument, "input %q: %w", name, err)
	}
	n := t.Numel()
	count := func(got int, field string) error {
		if got != n {
			return errorf(CodeInvalidArgument, "input %q: %d %s for shape %v (%d elements)", name, got, field, shape, n)
		}
		return nil
	}
	switch dt {
	case ivalue.Bool:
		if err := count(len(c.GetBoolContents()), "bool_contents"); err != nil {
			return nil, err
		}
		copy(t.B(), c.GetBoolContents())
	case ivalue.Float32:
		if err := count(len(c.GetFp32Contents()), "fp32_contents"); err != nil {
			return nil, err
		}
		copy(t.F32(), c.GetFp32Contents())
	case ivalue.Float64:
		if err := count(len(c.GetFp64Contents()), "fp64_contents"); err != nil {
			return nil, err
		}
		copy(t.F64(), c.GetFp64Contents())
	case ivalue.Int64:
		if err := count(len(c.GetInt64Contents()), "int64_contents"); err != nil {
			return nil, err
		}
		copy(t.I64(), c.GetInt64Contents())
	case ivalue.Int32, ivalue.Int16, ivalue.Int8:
		src := c.GetIntContents()
		if err := count(len(src), "int_contents"); err != nil {
			return nil, err
		}
		for i, v := range src {
			switch dt {
			case ivalue.Int32:
				t.I32()[i] = v
			case ivalue.Int16:
				if v < math.MinInt16 || v > math.MaxInt16 {
					return nil, errorf(CodeInvalidArgument, "input %q: element %d, %d, is out of INT16's range", name, i, v)
				}
				t.I16()[i] = int16(v)
			case ivalue.Int8:
				if v < math.MinInt8 || v > math.MaxInt8 {
					return nil, errorf(CodeInvalidArgument, "input %q: element %d, %d, is out of INT8's range", name, i, v)
				}
				t.I8()[i] = int8(v)
			}
		}
	case ivalue.Uint8:
		src := c.GetUintContents()
		if err := count(len(src), "uint_contents"); err != nil {
			return nil, err
		}
		for i, v := range src {
			if v > math.MaxUint8 {
				return nil, errorf(CodeInvalidArgument, "input %q: element %d, %d, is out of UINT8's range", name, i, v)
			}
			t.U8()[i] = uint8(v)
		}
	default:
		return nil, errorf(CodeInvalidArgument, "input %q: %s travels only as raw_input_contents", name, Datatype(dt))
	}
	return t, nil
}

// typedContents is t's elements in the contents field of its datatype;
// FP16 and BF16, which have none, go as their bits in uint_contents
// (a client that asks typed inputs for them is told so by decodeGRPC).
func typedContents(t *ivalue.Tensor) *inferpb.InferTensorContents {
	c := &inferpb.InferTensorContents{}
	lo, hi := t.Offset(), t.Offset()+t.Numel() // t may be a view of a batch's rows
	switch t.DType() {
	case ivalue.Bool:
		c.BoolContents = append([]bool(nil), t.B()[lo:hi]...)
	case ivalue.Float32:
		c.Fp32Contents = append([]float32(nil), t.F32()[lo:hi]...)
	case ivalue.Float64:
		c.Fp64Contents = append([]float64(nil), t.F64()[lo:hi]...)
	case ivalue.Int64:
		c.Int64Contents = append([]int64(nil), t.I64()[lo:hi]...)
	case ivalue.Int32:
		c.IntContents = append([]int32(nil), t.I32()[lo:hi]...)
	case ivalue.Int16:
		for _, v := range t.I16()[lo:hi] {
			c.IntContents = append(c.IntContents, int32(v))
		}
	case ivalue.Int8:
		for _, v := range t.I8()[lo:hi] {
			c.IntContents = append(c.IntContents, int32(v))
		}
	case ivalue.Uint8:
		for _, v := range t.U8()[lo:hi] {
			c.UintContents = append(c.UintContents, uint32(v))
		}
	case ivalue.Float16, ivalue.BFloat16:
		for _, v := range t.U16()[lo:hi] {
			c.UintContents = append(c.UintContents, uint32(v))
		}
	}
	return c
}
