package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/serve"
	"github.com/gosr/gosr/serve/inferpb"
)

// The client side of srbench load: the request's tensors, and one
// sender per protocol. Every request of a run is the same, so each body
// is encoded once and the workers only send it: the client's own cost per
// request stays small beside the server's.

// loadTensor is one input of the request: its bytes row-major and
// little-endian, as the protocol's raw contents are.
type loadTensor struct {
	serve.TensorMetadata
	raw []byte
}

// elemSize is the bytes of one element of a protocol datatype.
func elemSize(datatype string) (int, error) {
	dt, err := serve.DTypeOf(datatype)
	if err != nil {
		return 0, err
	}
	return dt.Size(), nil
}

// numElems is the element count of a concrete shape.
func numElems(shape []int64) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > 0 && n > math.MaxInt32/int(d) {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, math.MaxInt32)
		}
		n *= int(d)
	}
	return n, nil
}

// inputsFromMeta makes the request's tensors from the model's declared
// inputs: shapes holds the shapes given with -shape (needed for every
// input with a -1 dimension, and taking precedence over the declared
// one); zero fills them with zeros instead of random values (seeded, so
// that every run sends the same data).
func inputsFromMeta(meta *serve.ModelMetadata, shapes map[string][]int64, zero bool) ([]loadTensor, error) {
	if len(meta.Inputs) == 0 {
		return nil, fmt.Errorf("model %q: the metadata lists no inputs; give them with -input FILE", meta.Name)
	}
	known := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]loadTensor, len(meta.Inputs))
	for i, in := range meta.Inputs {
		known[in.Name] = true
		shape := in.Shape
		if s, ok := shapes[in.Name]; ok {
			// [-1] is also how a server says it does not know the rank
			// (gosr's, for a model with neither config nor sample inputs).
			anyRank := len(in.Shape) == 1 && in.Shape[0] == -1
			if len(s) != len(in.Shape) && !anyRank {
				return nil, fmt.Errorf("-shape %s:%s: the model declares %d dimensions (%v)", in.Name, shapeString(s), len(in.Shape), in.Shape)
			}
			for k, d := range in.Shape {
				if d >= 0 && d != s[k] {
					return nil, fmt.Errorf("-shape %s:%s: dimension %d is %d in the model's metadata (%v)", in.Name, shapeString(s), k, d, in.Shape)
				}
			}
			shape = s
		}
		for _, d := range shape {
			if d < 0 {
				return nil, fmt.Errorf("input %s has shape %v: give its size with -shape %s:DIM,DIM,...", in.Name, in.Shape, in.Name)
			}
		}
		raw, err := fillRaw(in.Datatype, shape, rng, zero)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in.Name, err)
		}
		ts[i] = loadTensor{serve.TensorMetadata{Name: in.Name, Datatype: in.Datatype, Shape: shape}, raw}
	}
	for name := range shapes {
		if !known[name] {
			return nil, fmt.Errorf("-shape %s: model %q has no such input (%s)", name, meta.Name, metaNames(meta.Inputs))
		}
	}
	return ts, nil
}

func metaNames(ts []serve.TensorMetadata) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, ",")
}

// fillRaw is a tensor's bytes: zeros, or random values (floats in
// [0, 1), integers and booleans 0 or 1, so that an index input stays in
// range).
func fillRaw(datatype string, shape []int64, rng *rand.Rand, zero bool) ([]byte, error) {
	size, err := elemSize(datatype)
	if err != nil {
		return nil, err
	}
	n, err := numElems(shape)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, n*size)
	if zero {
		return raw, nil
	}
	for i := range n {
		v := rng.Float64()
		if !isFloat(datatype) {
			v = float64(rng.IntN(2))
		}
		putElem(datatype, raw[i*size:], v)
	}
	return raw, nil
}

func isFloat(datatype string) bool {
	switch datatype {
	case "FP16", "BF16", "FP32", "FP64":
		return true
	}
	return false
}

// putElem writes v as one element of datatype at b.
func putElem(datatype string, b []byte, v float64) {
	le := binary.LittleEndian
	switch datatype {
	case "BOOL", "UINT8":
		b[0] = byte(uint8(v))
	case "INT8":
		b[0] = byte(int8(v))
	case "INT16":
		le.PutUint16(b, uint16(int16(v)))
	case "INT32":
		le.PutUint32(b, uint32(int32(v)))
	case "INT64":
		le.PutUint64(b, uint64(int64(v)))
	case "FP16":
		le.PutUint16(b, ivalue.Float32ToHalf(float32(v)))
	case "BF16":
		le.PutUint16(b, ivalue.Float32ToBFloat16(float32(v)))
	case "FP32":
		le.PutUint32(b, math.Float32bits(float32(v)))
	case "FP64":
		le.PutUint64(b, math.Float64bits(v))
	}
}

// jsonElems is raw as JSON values of datatype, flat (the protocol takes
// flat data with the shape beside it).
func jsonElems(datatype string, raw []byte) ([]any, error) {
	size, err := elemSize(datatype)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	out := make([]any, len(raw)/size)
	for i := range out {
		b := raw[i*size:]
		switch datatype {
		case "BOOL":
			out[i] = b[0] != 0
		case "UINT8":
			out[i] = b[0]
		case "INT8":
			out[i] = int8(b[0])
		case "INT16":
			out[i] = int16(le.Uint16(b))
		case "INT32":
			out[i] = int32(le.Uint32(b))
		case "INT64":
			out[i] = int64(le.Uint64(b))
		case "FP16":
			out[i] = ivalue.HalfToFloat32(le.Uint16(b))
		case "BF16":
			out[i] = ivalue.BFloat16ToFloat32(le.Uint16(b))
		case "FP32":
			out[i] = math.Float32frombits(le.Uint32(b))
		case "FP64":
			out[i] = math.Float64frombits(le.Uint64(b))
		}
	}
	return out, nil
}

// inputsFromFile reads -input FILE: a request body of the protocol's
// JSON form, {"inputs": [{"name", "shape", "datatype", "data"}]}, with
// data flat or nested.
func inputsFromFile(path string) ([]loadTensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var req struct {
		Inputs []struct {
			serve.TensorMetadata
			Data json.RawMessage `json:"data"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("%s: %w (want an inference request: {\"inputs\": [{\"name\", \"shape\", \"datatype\", \"data\"}]})", path, err)
	}
	if len(req.Inputs) == 0 {
		return nil, fmt.Errorf("%s: no inputs (want {\"inputs\": [{\"name\", \"shape\", \"datatype\", \"data\"}]})", path)
	}
	ts := make([]loadTensor, len(req.Inputs))
	for i, in := range req.Inputs {
		raw, err := rawFromJSON(in.Datatype, in.Shape, in.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: input %d (%q): %w", path, i, in.Name, err)
		}
		ts[i] = loadTensor{in.TensorMetadata, raw}
	}
	return ts, nil
}

// rawFromJSON encodes data (a JSON array, flat or nested) as the bytes
// of a tensor of datatype and shape.
func rawFromJSON(datatype string, shape []int64, data json.RawMessage) ([]byte, error) {
	size, err := elemSize(datatype)
	if err != nil {
		return nil, err
	}
	n, err := numElems(shape)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	var flat []any
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		case json.Number, bool:
			flat = append(flat, v)
		default:
			return fmt.Errorf("data holds %T, want numbers (or booleans for BOOL) in arrays", v)
		}
		return nil
	}
	if _, ok := v.([]any); !ok {
		return nil, fmt.Errorf("data is not an array")
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	if len(flat) != n {
		return nil, fmt.Errorf("data has %d elements, shape %v has %d", len(flat), shape, n)
	}
	raw := make([]byte, n*size)
	for i, e := range flat {
		var f float64
		switch e := e.(type) {
		case bool:
			if datatype != "BOOL" {
				return nil, fmt.Errorf("element %d is a boolean in a %s tensor", i, datatype)
			}
			if e {
				f = 1
			}
		case json.Number:
			if f, err = e.Float64(); err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			if datatype == "INT64" { // float64 loses int64's low bits
				k, err := e.Int64()
				if err != nil {
					return nil, fmt.Errorf("element %d (%s) is not an INT64", i, e)
				}
				binary.LittleEndian.PutUint64(raw[i*size:], uint64(k))
				continue
			}
			if !isFloat(datatype) && f != math.Trunc(f) {
				return nil, fmt.Errorf("element %d (%s) is not an integer in a %s tensor", i, e, datatype)
			}
		}
		putElem(datatype, raw[i*size:], f)
	}
	return raw, nil
}

// A sender sends the run's one request and checks the answer; one per
// worker, used by that worker only.
type sender interface {
	// infer sends the request and waits for the answer: an error for a
	// failed request (a status other than success). check also decodes
	// the answer and checks that its outputs hold the bytes their shapes
	// and datatypes call for, returning them.
	infer(ctx context.Context, check bool) ([]serve.TensorMetadata, error)
	close()
}

// loadClient knows a server and a model, and makes a worker's sender.
type loadClient interface {
	metadata(ctx context.Context) (*serve.ModelMetadata, error)
	// prepare encodes the request for inputs once, before any sender.
	prepare(inputs []loadTensor) error
	newSender() (sender, error)
	close()
}

// httpBase is the base URL of a server given as host:port or
// http(s)://host:port.
func httpBase(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("URL %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("URL %q: want host:port or http://host:port for -protocol http", addr)
	}
	if u.Host == "" {
		return "", fmt.Errorf("URL %q has no host:port", addr)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"), nil
}

// grpcTarget is the host:port of a server given as host:port or
// grpc://host:port.
func grpcTarget(addr string) (string, error) {
	addr = strings.TrimPrefix(addr, "grpc://")
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("URL %q: want host:port (or grpc://host:port) for -protocol grpc", addr)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("URL %q: want host:port: %w", addr, err)
	}
	return addr, nil
}

// httpClient speaks REST: JSON tensors, or with binary the binary tensor
// extension both ways.
type httpClient struct {
	client          *http.Client
	base            string // http://host:port
	binary          bool
	timeout         time.Duration
	body            []byte
	headerLen       int // binary: the JSON header's length
	inferURL, idURL string
	floor           bool // senders send GET /v2/health/live (-floor)
}

func newHTTPClient(addr, model, version string, binary, floor bool, conns int, timeout time.Duration) (*httpClient, error) {
	base, err := httpBase(addr)
	if err != nil {
		return nil, err
	}
	// Each worker keeps one connection alive: as many idle ones as
	// workers, no compression, no proxy (a load generator talks to the
	// server itself).
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * conns,
		MaxIdleConnsPerHost: 2 * conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	path := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		path += "/versions/" + url.PathEscape(version)
	}
	return &httpClient{
		client: &http.Client{Transport: tr, Timeout: timeout},
		base:   base, binary: binary, floor: floor, timeout: timeout,
		idURL: base + path, inferURL: base + path + "/infer",
	}, nil
}

func (c *httpClient) close() { c.client.CloseIdleConnections() }

// httpError is a failed request's error: its status and the server's
// {"error": "..."} message (or the start of the body).
func httpError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	return fmt.Errorf("%s %s: %s", resp.Request.Method, resp.Request.URL.Path, strings.TrimSpace(resp.Status+": "+msg))
}

func (c *httpClient) metadata(ctx context.Context) (*serve.ModelMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.idURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(resp)
	}
	var m serve.ModelMetadata
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("GET %s: the model's metadata: %w", c.idURL, err)
	}
	return &m, nil
}

// The protocol's request body: JSON, and for the binary extension its
// JSON header.
type (
	inferRequestJSON struct {
		Inputs     []inputJSON    `json:"inputs"`
		Parameters map[string]any `json:"parameters,omitempty"`
	}
	inputJSON struct {
		serve.TensorMetadata
		Parameters map[string]any `json:"parameters,omitempty"`
		Data       []any          `json:"data,omitempty"`
	}
)

func (c *httpClient) prepare(inputs []loadTensor) error {
	var req inferRequestJSON
	var raw bytes.Buffer
	for _, in := range inputs {
		ij := inputJSON{TensorMetadata: in.TensorMetadata}
		if c.binary {
			ij.Parameters = map[string]any{"binary_data_size": len(in.raw)}
			raw.Write(in.raw)
		} else {
			data, err := jsonElems(in.Datatype, in.raw)
			if err != nil {
				return fmt.Errorf("input %s: %w", in.Name, err)
			}
			ij.Data = data
		}
		req.Inputs = append(req.Inputs, ij)
	}
	if c.binary {
		req.Parameters = map[string]any{"binary_data_output": true}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.headerLen = len(body)
	c.body = append(body, raw.Bytes()...)
	return nil
}

// httpSender is one worker's connection. It writes the request and reads
// the answer on the worker's own goroutine, with net/http's Request.Write
// (once, for the bytes) and ReadResponse over one kept-alive connection,
// as each of perf_analyzer's workers does with libcurl. An http.Client
// would add its transport's reader and writer goroutines per connection
// and a timer goroutine per request: on a 2-core machine tens of
// microseconds a request, which the latencies would charge to the server.
type httpSender struct {
	c    *httpClient
	tmpl *http.Request // for ReadResponse, and the errors' method and path
	wire []byte        // the whole request, headers and body
	conn net.Conn      // nil until the first request, and after a failure
	br   *bufio.Reader
}

func (c *httpClient) newSender() (sender, error) {
	method, path, body := http.MethodPost, c.inferURL, io.Reader(bytes.NewReader(c.body))
	if c.floor {
		method, path, body = http.MethodGet, c.base+"/v2/health/live", nil
	}
	req, err := http.NewRequest(method, path, body)
	if err != nil {
		return nil, err
	}
	switch {
	case c.floor:
	case c.binary:
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Inference-Header-Content-Length", strconv.Itoa(c.headerLen))
	default:
		req.Header.Set("Content-Type", "application/json")
	}
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		return nil, err
	}
	return &httpSender{c: c, tmpl: req, wire: wire.Bytes()}, nil
}

func (s *httpSender) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *httpSender) dial(ctx context.Context) error {
	u := s.tmpl.URL
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	d := &net.Dialer{Timeout: s.c.timeout, KeepAlive: 30 * time.Second}
	var conn net.Conn
	var err error
	if u.Scheme == "https" {
		conn, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname()}}).DialContext(ctx, "tcp", host)
	} else {
		conn, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return err
	}
	s.conn = conn
	if s.br == nil {
		s.br = bufio.NewReaderSize(conn, 64<<10)
	} else {
		s.br.Reset(conn)
	}
	return nil
}

func (s *httpSender) infer(ctx context.Context, check bool) (metas []serve.TensorMetadata, err error) {
	if s.conn == nil {
		if err := s.dial(ctx); err != nil {
			return nil, err
		}
	}
	// A failure on the connection leaves it in an unknown state: the next
	// request dials a fresh one. An error answer read whole does not.
	kept := false
	defer func() {
		if err != nil && !kept {
			s.close()
		}
	}()
	// The deadline is the per-request timeout; a cancelled ctx moves it
	// to now, which ends a blocked read or write at once.
	if err := s.conn.SetDeadline(time.Now().Add(s.c.timeout)); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := s.conn.Write(s.wire); err != nil {
		return nil, fmt.Errorf("POST %s: %w", s.tmpl.URL.Path, err)
	}
	resp, err := http.ReadResponse(s.br, s.tmpl)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", s.tmpl.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.Close {
		defer s.close()
	}
	if resp.StatusCode != http.StatusOK {
		err := httpError(resp)
		_, cerr := io.Copy(io.Discard, resp.Body) // what httpError left
		kept = cerr == nil
		return nil, err
	}
	if !check || s.c.floor {
		_, err := io.Copy(io.Discard, resp.Body)
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return checkHTTPResponse(body, resp.Header.Get("Inference-Header-Content-Length"))
}

// checkHTTPResponse decodes an infer response (JSON, or a JSON header of
// headerLen bytes and the outputs' bytes) and checks that each output
// holds as many elements as its shape.
func checkHTTPResponse(body []byte, headerLen string) ([]serve.TensorMetadata, error) {
	header, rest := body, []byte(nil)
	if headerLen != "" {
		n, err := strconv.Atoi(headerLen)
		if err != nil || n < 0 || n > len(body) {
			return nil, fmt.Errorf("response: Inference-Header-Content-Length %q for a %d-byte body", headerLen, len(body))
		}
		header, rest = body[:n], body[n:]
	}
	var resp struct {
		Outputs []struct {
			serve.TensorMetadata
			Parameters map[string]any  `json:"parameters"`
			Data       json.RawMessage `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(header, &resp); err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	if len(resp.Outputs) == 0 {
		return nil, errors.New("response: no outputs")
	}
	metas := make([]serve.TensorMetadata, len(resp.Outputs))
	for i, o := range resp.Outputs {
		metas[i] = o.TensorMetadata
		size, err := elemSize(o.Datatype)
		if err != nil {
			return nil, fmt.Errorf("response: output %s: %w", o.Name, err)
		}
		n, err := numElems(o.Shape)
		if err != nil {
			return nil, fmt.Errorf("response: output %s: %w", o.Name, err)
		}
		if bs, ok := o.Parameters["binary_data_size"]; ok {
			f, ok := bs.(float64)
			if !ok || int(f) != n*size || int(f) > len(rest) {
				return nil, fmt.Errorf("response: output %s (%s %v, %d bytes) has binary_data_size %v with %d bytes left in the body", o.Name, o.Datatype, o.Shape, n*size, bs, len(rest))
			}
			rest = rest[int(f):]
			continue
		}
		if _, err := rawFromJSON(o.Datatype, o.Shape, o.Data); err != nil {
			return nil, fmt.Errorf("response: output %s: %w", o.Name, err)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("response: %d bytes past the outputs' binary data", len(rest))
	}
	return metas, nil
}

// grpcClient speaks gRPC, the inputs in raw_input_contents; each sender
// has a connection of its own, as each of perf_analyzer's workers does.
type grpcClient struct {
	target, model, version string
	timeout                time.Duration
	conn                   *grpc.ClientConn // metadata's
	req                    *inferpb.ModelInferRequest
	floor                  bool // senders call ServerLive (-floor)
}

func newGRPCClient(addr, model, version string, floor bool, timeout time.Duration) (*grpcClient, error) {
	target, err := grpcTarget(addr)
	if err != nil {
		return nil, err
	}
	c := &grpcClient{target: target, model: model, version: version, floor: floor, timeout: timeout}
	if c.conn, err = c.dial(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *grpcClient) dial() (*grpc.ClientConn, error) {
	// Fixed windows, gosr serve's: no ping after each answer's data.
	conn, err := grpc.NewClient(c.target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
		grpc.WithInitialWindowSize(serve.GRPCStreamWindow), grpc.WithInitialConnWindowSize(serve.GRPCConnWindow))
	if err != nil {
		return nil, fmt.Errorf("gRPC %s: %w", c.target, err)
	}
	return conn, nil
}

func (c *grpcClient) close() { c.conn.Close() }

func (c *grpcClient) metadata(ctx context.Context) (*serve.ModelMetadata, error) {
	r, err := inferpb.NewGRPCInferenceServiceClient(c.conn).ModelMetadata(ctx,
		&inferpb.ModelMetadataRequest{Name: c.model, Version: c.version})
	if err != nil {
		return nil, fmt.Errorf("ModelMetadata %s: %w", c.model, grpcErr(err))
	}
	m := &serve.ModelMetadata{Name: r.Name, Versions: r.Versions, Platform: r.Platform}
	for _, t := range r.Inputs {
		m.Inputs = append(m.Inputs, serve.TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	for _, t := range r.Outputs {
		m.Outputs = append(m.Outputs, serve.TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
	}
	return m, nil
}

// grpcErr is err as its code and message.
func grpcErr(err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("%s: %s", s.Code(), s.Message())
	}
	return err
}

func (c *grpcClient) prepare(inputs []loadTensor) error {
	req := &inferpb.ModelInferRequest{ModelName: c.model, ModelVersion: c.version}
	for _, in := range inputs {
		req.Inputs = append(req.Inputs, &inferpb.ModelInferRequest_InferInputTensor{
			Name: in.Name, Datatype: in.Datatype, Shape: in.Shape})
		req.RawInputContents = append(req.RawInputContents, in.raw)
	}
	c.req = req
	return nil
}

func (c *grpcClient) newSender() (sender, error) {
	conn, err := c.dial()
	if err != nil {
		return nil, err
	}
	return &grpcSender{c: c, conn: conn, stub: inferpb.NewGRPCInferenceServiceClient(conn)}, nil
}

type grpcSender struct {
	c    *grpcClient
	conn *grpc.ClientConn
	stub inferpb.GRPCInferenceServiceClient
}

func (s *grpcSender) close() { s.conn.Close() }

func (s *grpcSender) infer(ctx context.Context, check bool) ([]serve.TensorMetadata, error) {
	// The request is shared by the workers: marshaling only reads it.
	ctx, cancel := context.WithTimeout(ctx, s.c.timeout)
	defer cancel()
	if s.c.floor {
		if _, err := s.stub.ServerLive(ctx, &inferpb.ServerLiveRequest{}); err != nil {
			return nil, fmt.Errorf("ServerLive: %w", grpcErr(err))
		}
		return nil, nil
	}
	r, err := s.stub.ModelInfer(ctx, s.c.req)
	if err != nil {
		return nil, fmt.Errorf("ModelInfer: %w", grpcErr(err))
	}
	if !check {
		return nil, nil
	}
	return checkGRPCResponse(r)
}

// checkGRPCResponse checks that each output of r holds as many bytes
// (raw_output_contents) or elements (contents) as its shape.
func checkGRPCResponse(r *inferpb.ModelInferResponse) ([]serve.TensorMetadata, error) {
	if len(r.Outputs) == 0 {
		return nil, errors.New("response: no outputs")
	}
	if len(r.RawOutputContents) != 0 && len(r.RawOutputContents) != len(r.Outputs) {
		return nil, fmt.Errorf("response: %d outputs with %d raw_output_contents", len(r.Outputs), len(r.RawOutputContents))
	}
	metas := make([]serve.TensorMetadata, len(r.Outputs))
	for i, o := range r.Outputs {
		metas[i] = serve.TensorMetadata{Name: o.Name, Datatype: o.Datatype, Shape: o.Shape}
		size, err := elemSize(o.Datatype)
		if err != nil {
			return nil, fmt.Errorf("response: output %s: %w", o.Name, err)
		}
		n, err := numElems(o.Shape)
		if err != nil {
			return nil, fmt.Errorf("response: output %s: %w", o.Name, err)
		}
		if len(r.RawOutputContents) == 0 {
			if o.Contents == nil {
				return nil, fmt.Errorf("response: output %s has neither raw_output_contents nor contents", o.Name)
			}
			continue
		}
		if got := len(r.RawOutputContents[i]); got != n*size {
			return nil, fmt.Errorf("response: output %s (%s %v) has %d bytes of raw_output_contents, want %d", o.Name, o.Datatype, o.Shape, got, n*size)
		}
	}
	return metas, nil
}
