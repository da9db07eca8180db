package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/pyfallback"
	"github.com/gosr/gosr/serve/inferpb"
	"github.com/gosr/gosr/staticruntime"
)

// Version is the server version ServerMetadata reports.
const Version = "0.1.0"

// Extensions are the protocol extensions the server implements.
var Extensions = []string{"binary_tensor_data", "model_repository", "statistics_metrics"}

// Options configure a Server. The zero value of a field means its
// default (DefaultOptions).
type Options struct {
	ModelRepository string // the Triton-layout directory of models
	// Listen addresses ("host:port"; ":0" picks a port; "" turns the
	// listener off).
	HTTPAddr, GRPCAddr, MetricsAddr string
	// Instances is the default runtimes per model when its config has
	// no instance_group count: the CPUs the container may use.
	Instances int
	// MaxQueueSize bounds a model's requests queued or running, unless
	// its config's dynamic_batching.default_queue_policy.max_queue_size
	// says otherwise; more are answered 503 / UNAVAILABLE at once.
	MaxQueueSize int
	// MaxRequestBytes bounds a request body or message (413 /
	// RESOURCE_EXHAUSTED past it).
	MaxRequestBytes int64
	// HTTP timeouts: a slow client cannot hold a connection forever.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// DrainTimeout bounds Shutdown's wait for requests in flight, and a
	// retired model version's wait for its requests.
	DrainTimeout time.Duration
	// ModelControl "explicit" (the default) loads every model at start
	// and takes load and unload requests; "none" loads every model at
	// start and refuses them.
	ModelControl string
	// Runtime is the options every model is prepared with (nil:
	// staticruntime.DefaultOptions).
	Runtime *staticruntime.Options
	// Loader bounds what a model file may cost (nil: the defaults).
	Loader *loaders.Options
	// PythonInterpreters, when above 0, starts that many private
	// interpreters (on first use) for torch.package models.
	PythonInterpreters int
	Logger             *slog.Logger
}

// DefaultOptions are the options a zero field stands for.
func DefaultOptions() Options {
	return Options{
		HTTPAddr: ":8080", GRPCAddr: ":8081", MetricsAddr: ":8002",
		Instances: runtime.GOMAXPROCS(0), MaxQueueSize: 1024, MaxRequestBytes: 64 << 20,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 120 * time.Second, DrainTimeout: 30 * time.Second, ModelControl: "explicit",
		PythonInterpreters: 2,
	}
}

func (o *Options) fill() {
	d := DefaultOptions()
	if o.Instances <= 0 {
		o.Instances = d.Instances
	}
	if o.MaxQueueSize <= 0 {
		o.MaxQueueSize = d.MaxQueueSize
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = d.MaxRequestBytes
	}
	for _, p := range []struct {
		f *time.Duration
		d time.Duration
	}{
		{&o.ReadHeaderTimeout, d.ReadHeaderTimeout}, {&o.ReadTimeout, d.ReadTimeout}, {&o.WriteTimeout, d.WriteTimeout},
		{&o.IdleTimeout, d.IdleTimeout}, {&o.DrainTimeout, d.DrainTimeout},
	} {
		if *p.f <= 0 {
			*p.f = p.d
		}
	}
	if o.ModelControl == "" {
		o.ModelControl = d.ModelControl
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Server serves the models of a repository over the Open Inference
// Protocol: REST (HTTPHandler), gRPC (GRPCServer) and Prometheus metrics.
type Server struct {
	opts    Options
	log     *slog.Logger
	repo    *repository
	metrics *metrics

	pyOnce sync.Once
	py     *pyLoader
	pyErr  error

	draining atomic.Bool
	health   *health.Server // grpc.health.v1

	// Set by Start.
	httpSrv, metricsSrv *http.Server
	grpcSrv             *grpc.Server
	lis                 map[string]net.Listener
	serveErr            chan error
}

// New makes a server for opts.ModelRepository and loads its models. A
// repository that cannot be read is an error and no server. A model
// that fails to load is reported in the returned error and in the
// repository index, beside a server that serves the others (check the
// error to refuse starting with a broken repository).
func New(ctx context.Context, opts Options) (*Server, error) {
	opts.fill()
	if opts.ModelControl != "explicit" && opts.ModelControl != "none" {
		return nil, fmt.Errorf("serve: ModelControl %q: explicit or none", opts.ModelControl)
	}
	s := &Server{opts: opts, log: opts.Logger, metrics: newMetrics(), health: health.NewServer()}
	ro := staticruntime.DefaultOptions()
	if opts.Runtime != nil {
		ro = *opts.Runtime
	}
	lo := loadOptions{defaultInstances: opts.Instances, maxQueue: opts.MaxQueueSize, runtime: ro, loader: opts.Loader}
	if opts.PythonInterpreters > 0 {
		lo.python = s.python
	}
	s.repo = newRepository(opts.ModelRepository, lo, s.log, s.metrics, opts.DrainTimeout)
	if opts.ModelRepository == "" {
		return nil, errors.New("serve: no model repository")
	}
	if _, err := s.repo.names(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return s, s.repo.loadAll(ctx)
}

// python starts the server's interpreters on first use.
func (s *Server) python() (pythonLoader, error) {
	s.pyOnce.Do(func() {
		m, err := pyfallback.NewManager(pyfallback.Options{Interpreters: s.opts.PythonInterpreters})
		if err != nil {
			s.pyErr = fmt.Errorf("starting the Python fallback: %w", err)
			return
		}
		s.py = &pyLoader{m: m}
		s.metrics.registerPython(m)
	})
	if s.pyErr != nil {
		return nil, s.pyErr
	}
	return s.py, nil
}

type pyLoader struct{ m *pyfallback.Manager }

func (p *pyLoader) loadPackage(path, pkg, resource string, o *staticruntime.Options) (*staticruntime.StaticModule, *loaders.Model, error) {
	pk, err := p.m.LoadPackage(path)
	if err != nil {
		return nil, nil, err
	}
	return pk.Module(pkg, resource, o)
}

// Live reports whether the server runs (always, until it is stopped).
func (s *Server) Live() bool { return !s.draining.Load() }

// Ready reports whether the server takes inference requests: not
// draining, and no model is still loading.
func (s *Server) Ready() bool { return !s.draining.Load() && s.repo.ready() }

// ModelReady reports whether model name (version, or the newest) serves.
func (s *Server) ModelReady(name, version string) bool {
	v, err := s.repo.get(name, version)
	if err != nil {
		return false
	}
	v.release()
	return true
}

// LoadModel (re)loads a model from the repository: the new version
// replaces the old one atomically once it is ready; on failure the old
// one keeps serving.
func (s *Server) LoadModel(ctx context.Context, name string) error {
	if s.opts.ModelControl == "none" {
		return errorf(CodeUnavailable, "model control is off (ModelControl none): models load at start only")
	}
	return s.repo.load(ctx, name)
}

// UnloadModel takes a model out of service after its requests finish.
func (s *Server) UnloadModel(name string) error {
	if s.opts.ModelControl == "none" {
		return errorf(CodeUnavailable, "model control is off (ModelControl none): models load at start only")
	}
	return s.repo.unload(name)
}

// Index lists the repository's models and their states.
func (s *Server) Index(readyOnly bool) ([]IndexEntry, error) { return s.repo.index(readyOnly) }

// TensorMetadata describes one input or output of a model.
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// ModelMetadata is what the protocol's model metadata request returns.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// Metadata describes model name at version (or the newest).
func (s *Server) Metadata(name, version string) (*ModelMetadata, error) {
	v, err := s.repo.get(name, version)
	if err != nil {
		return nil, err
	}
	defer v.release()
	md := &ModelMetadata{Name: name, Versions: s.repo.versions(name), Platform: v.platform}
	for _, in := range v.inputs {
		md.Inputs = append(md.Inputs, TensorMetadata{Name: in.Name, Datatype: in.datatype(), Shape: in.shape()})
	}
	for _, out := range v.outputs {
		md.Outputs = append(md.Outputs, TensorMetadata{Name: out.Name, Datatype: out.datatype(), Shape: out.shape()})
	}
	return md, nil
}

// InferInput is one decoded input tensor of a request.
type InferInput struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     *ivalue.Tensor
}

// InferRequest is a decoded inference request.
type InferRequest struct {
	Model, Version, ID string
	Inputs             []InferInput
	// Outputs names the outputs wanted (nil: all), with Binary saying
	// which to send as raw bytes (HTTP's binary extension).
	Outputs []RequestedOutput
	// BinaryOutputs: every output raw (binary_data_output).
	BinaryOutputs bool
}

// RequestedOutput is one output a request asks for.
type RequestedOutput struct {
	Name   string
	Binary bool
}

// InferOutput is one output tensor of a response.
type InferOutput struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     *ivalue.Tensor // contiguous, owned by the response
	Binary   bool
}

// InferResponse is the result of a request.
type InferResponse struct {
	Model, Version, ID string
	Outputs            []InferOutput
}

// Infer runs one request. ctx carries the request's deadline and its
// cancellation (a closed connection). Errors are *Error.
func (s *Server) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	if s.draining.Load() {
		return nil, errorf(CodeUnavailable, "the server is shutting down")
	}
	start := time.Now()
	v, err := s.repo.get(req.Model, req.Version)
	if err != nil {
		return nil, err
	}
	defer v.release()
	mm := v.metrics
	resp, rows, err := s.infer(ctx, v, req, start)
	if err != nil {
		e := asError(err)
		if e.Code == CodeInternal {
			s.log.Warn("inference failed", "model", v.name, "version", v.version, "id", req.ID, "err", e.Msg)
		}
		mm.fail(e)
		return nil, e
	}
	d := time.Since(start)
	mm.success.Inc()
	mm.count.Add(float64(rows))
	mm.requestUs.Add(float64(d.Microseconds()))
	mm.latency.Observe(d.Seconds())
	return resp, nil
}

func (s *Server) infer(ctx context.Context, v *modelVersion, req *InferRequest, start time.Time) (*InferResponse, int, error) {
	args, rows, err := v.arguments(req)
	if err != nil {
		return nil, 0, err
	}
	want, err := v.requested(req)
	if err != nil {
		return nil, 0, err
	}
	mm := v.metrics
	if n := v.pending.Add(1); n > v.maxQueue && v.batch == nil {
		v.pending.Add(-1)
		return nil, 0, ErrQueueFull
	}
	mm.pending.Inc()
	defer func() {
		v.pending.Add(-1)
		mm.pending.Dec()
	}()
	var outs []*ivalue.Tensor
	if v.batch != nil {
		var queued time.Duration
		outs, queued, err = v.batch.submit(ctx, args)
		mm.queueUs.Add(float64(queued.Microseconds()))
		mm.computeUs.Add(float64((time.Since(start) - queued).Microseconds()))
	} else {
		var started time.Time
		outs, started, err = v.executeTimed(ctx, args)
		if !started.IsZero() {
			mm.queueUs.Add(float64(started.Sub(start).Microseconds()))
			mm.computeUs.Add(float64(time.Since(started).Microseconds()))
		}
	}
	if err != nil {
		return nil, 0, err
	}
	resp := &InferResponse{Model: v.name, Version: v.versionString(), ID: req.ID}
	for _, w := range want {
		t := outs[w.index]
		resp.Outputs = append(resp.Outputs, InferOutput{Name: v.outputs[w.index].Name, Datatype: Datatype(t.DType()),
			Shape: int64Shape(t.Sizes()), Data: t, Binary: w.binary})
	}
	return resp, rows, nil
}

// arguments matches the request's inputs to the model's arguments and
// checks them against what the model declares. rows is the batch size
// (dim 0) for a model with a batch dimension, else 1.
func (v *modelVersion) arguments(req *InferRequest) ([]*ivalue.Tensor, int, error) {
	args := make([]*ivalue.Tensor, len(v.inputs))
	for _, in := range req.Inputs {
		at := -1
		for i, spec := range v.inputs {
			if in.Name == spec.Name || in.Name == spec.alias {
				at = i
			}
		}
		if at < 0 {
			return nil, 0, errorf(CodeInvalidArgument, "model %s has no input %q (its inputs: %s)", v.name, in.Name, v.inputNames())
		}
		if args[at] != nil {
			return nil, 0, errorf(CodeInvalidArgument, "input %q is given twice", in.Name)
		}
		spec := v.inputs[at]
		if spec.DType != ivalue.Undefined && in.Data.DType() != spec.DType {
			return nil, 0, errorf(CodeInvalidArgument, "input %q of model %s: datatype %s; the model takes %s", in.Name, v.name, in.Datatype, spec.datatype())
		}
		if !spec.fits(in.Shape) {
			return nil, 0, errorf(CodeInvalidArgument, "input %q of model %s: shape %v; the model takes %v (-1: any size)", in.Name, v.name, in.Shape, spec.Shape)
		}
		args[at] = in.Data
	}
	for i, a := range args {
		if a == nil {
			return nil, 0, errorf(CodeInvalidArgument, "model %s: input %q is missing (its inputs: %s)", v.name, v.inputs[i].Name, v.inputNames())
		}
	}
	rows := 1
	if v.maxBatch > 0 {
		for i, a := range args {
			if a.Dim() == 0 {
				return nil, 0, errorf(CodeInvalidArgument, "input %q of model %s is a scalar; the model batches along dim 0", v.inputs[i].Name, v.name)
			}
			if i == 0 {
				rows = a.Size(0)
			} else if a.Size(0) != rows {
				return nil, 0, errorf(CodeInvalidArgument, "model %s: inputs have batch sizes %d and %d (dim 0 must agree)", v.name, rows, a.Size(0))
			}
		}
		if rows < 1 || rows > v.maxBatch {
			return nil, 0, errorf(CodeInvalidArgument, "model %s: batch size %d is not in [1, max_batch_size %d]", v.name, rows, v.maxBatch)
		}
	}
	return args, rows, nil
}

func (v *modelVersion) inputNames() string {
	s := ""
	for i, in := range v.inputs {
		if i > 0 {
			s += ", "
		}
		s += in.Name
	}
	return s
}

type wantOutput struct {
	index  int
	binary bool
}

// requested resolves the outputs a request asks for.
func (v *modelVersion) requested(req *InferRequest) ([]wantOutput, error) {
	if len(req.Outputs) == 0 {
		w := make([]wantOutput, len(v.outputs))
		for i := range w {
			w[i] = wantOutput{i, req.BinaryOutputs}
		}
		return w, nil
	}
	w := make([]wantOutput, 0, len(req.Outputs))
	for _, o := range req.Outputs {
		at := -1
		for i, spec := range v.outputs {
			if spec.Name == o.Name {
				at = i
			}
		}
		if at < 0 {
			names := ""
			for i, spec := range v.outputs {
				if i > 0 {
					names += ", "
				}
				names += spec.Name
			}
			return nil, errorf(CodeInvalidArgument, "model %s has no output %q (its outputs: %s)", v.name, o.Name, names)
		}
		w = append(w, wantOutput{at, o.Binary || req.BinaryOutputs})
	}
	return w, nil
}

// Start listens on the configured addresses and serves in the
// background. Addrs reports the bound addresses.
func (s *Server) Start() error {
	s.lis = map[string]net.Listener{}
	s.serveErr = make(chan error, 3)
	listen := func(kind, addr string) (net.Listener, error) {
		if addr == "" {
			return nil, nil
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, o := range s.lis {
				o.Close()
			}
			return nil, fmt.Errorf("serve: %s listener: %w", kind, err)
		}
		s.lis[kind] = l
		return l, nil
	}
	hl, err := listen("http", s.opts.HTTPAddr)
	if err != nil {
		return err
	}
	gl, err := listen("grpc", s.opts.GRPCAddr)
	if err != nil {
		return err
	}
	ml, err := listen("metrics", s.opts.MetricsAddr)
	if err != nil {
		return err
	}
	if hl != nil {
		s.httpSrv = &http.Server{Handler: s.HTTPHandler(), ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
			ReadTimeout: s.opts.ReadTimeout, WriteTimeout: s.opts.WriteTimeout, IdleTimeout: s.opts.IdleTimeout,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
		go func() { s.serveErr <- ignoreClosed(s.httpSrv.Serve(hl)) }()
	}
	if gl != nil {
		s.grpcSrv = s.GRPCServer()
		go func() { s.serveErr <- s.grpcSrv.Serve(gl) }()
	}
	if ml != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.MetricsHandler())
		s.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: s.opts.ReadHeaderTimeout}
		go func() { s.serveErr <- ignoreClosed(s.metricsSrv.Serve(ml)) }()
	}
	s.log.Info("serving", "http", s.Addr("http"), "grpc", s.Addr("grpc"), "metrics", s.Addr("metrics"))
	return nil
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Addr is the bound address of listener kind ("http", "grpc",
// "metrics"), or "" when it is off.
func (s *Server) Addr(kind string) string {
	if l := s.lis[kind]; l != nil {
		return l.Addr().String()
	}
	return ""
}

// MetricsHandler serves the Prometheus metrics.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{Registry: s.metrics.reg})
}

// Shutdown drains the server: readiness turns false and new requests
// are refused at once, the listeners stop accepting, requests in flight
// finish (at most ctx's time), then the models are freed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.health.Shutdown() // NOT_SERVING for every service
	s.log.Info("draining")
	var errs []error
	if s.httpSrv != nil {
		errs = append(errs, s.httpSrv.Shutdown(ctx))
	}
	if s.grpcSrv != nil {
		done := make(chan struct{})
		go func() { s.grpcSrv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpcSrv.Stop()
			errs = append(errs, fmt.Errorf("gRPC drain: %w", ctx.Err()))
		}
	}
	s.repo.close()
	if s.metricsSrv != nil {
		errs = append(errs, s.metricsSrv.Shutdown(ctx))
	}
	if s.py != nil {
		errs = append(errs, s.py.m.Close())
	}
	s.log.Info("stopped")
	return errors.Join(errs...)
}

// Serving returns a channel that receives a listener's fatal error.
func (s *Server) Serving() <-chan error { return s.serveErr }

var _ inferpb.GRPCInferenceServiceServer = (*grpcService)(nil)
