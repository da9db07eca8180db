package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fastjson"
)

// The REST side of the Open Inference Protocol (KServe v2), with
// Triton's binary tensor extension and model repository extension.

// headerLen is the binary extension's header: the length of the JSON
// part of a body whose tensors follow it as raw bytes.
const headerLen = "Inference-Header-Content-Length"

// HTTPHandler is the REST API. Start serves it on HTTPAddr; embed it
// elsewhere at will.
func (s *Server) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/health/live", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, s.Live(), "live")
	})
	mux.HandleFunc("GET /v2/health/ready", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, s.Ready(), "ready")
	})
	mux.HandleFunc("GET /v2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"name": "gosr", "version": Version, "extensions": Extensions})
	})
	for _, prefix := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		mux.HandleFunc("GET "+prefix, s.handleMetadata)
		mux.HandleFunc("GET "+prefix+"/ready", func(w http.ResponseWriter, r *http.Request) {
			ok := s.ModelReady(r.PathValue("model"), r.PathValue("version"))
			code := http.StatusOK
			if !ok {
				code = http.StatusServiceUnavailable
			}
			writeJSON(w, code, map[string]any{"name": r.PathValue("model"), "ready": ok})
		})
		mux.HandleFunc("POST "+prefix+"/infer", s.handleInfer)
	}
	mux.HandleFunc("POST /v2/repository/index", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Ready bool `json:"ready"`
		}
		if err := decodeSmall(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		idx, err := s.Index(req.Ready)
		if err != nil {
			writeError(w, err)
			return
		}
		if idx == nil {
			idx = []IndexEntry{}
		}
		writeJSON(w, http.StatusOK, idx)
	})
	mux.HandleFunc("POST /v2/repository/models/{model}/load", func(w http.ResponseWriter, r *http.Request) {
		if err := decodeSmall(w, r, &struct{}{}); err != nil {
			writeError(w, err)
			return
		}
		if err := s.LoadModel(r.Context(), r.PathValue("model")); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("POST /v2/repository/models/{model}/unload", func(w http.ResponseWriter, r *http.Request) {
		if err := decodeSmall(w, r, &struct{}{}); err != nil {
			writeError(w, err)
			return
		}
		if err := s.UnloadModel(r.PathValue("model")); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(CodeNotFound, "no endpoint %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func writeStatus(w http.ResponseWriter, ok bool, what string) {
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]bool{what: ok})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// writeError answers {"error": "..."} with err's status.
func writeError(w http.ResponseWriter, err error) {
	e := asError(err)
	b := appendString([]byte(`{"error":`), e.Msg)
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code.HTTPStatus())
	w.Write(b)
}

// decodeSmall reads an optional small JSON body into v.
func decodeSmall(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		return bodyError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(CodeInvalidArgument, "malformed JSON body: %w", err)
	}
	return nil
}

func bodyError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &Error{Code: CodeTooLarge, Msg: fmt.Sprintf("the body is over the server's %d-byte limit", mb.Limit), Err: err}
	}
	return errorf(CodeInvalidArgument, "reading the body: %w", err)
}

func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	md, err := s.Metadata(r.PathValue("model"), r.PathValue("version"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, md)
}

// parsers parse infer requests' JSON: one pass, no reflection, each
// number kept as text until the tensor's type says how to read it.
var parsers fastjson.ParserPool

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// getBuf takes an empty buffer from the pool; putBuf gives it back,
// unless a large request grew it (the pool would keep that memory).
func getBuf() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bufPool.Put(b)
	}
}

func (s *Server) handleInfer(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, errorf(CodeUnavailable, "the server is shutting down"))
		return
	}
	if r.ContentLength > s.opts.MaxRequestBytes {
		writeError(w, &Error{Code: CodeTooLarge, Msg: fmt.Sprintf("a %d-byte body is over the server's %d-byte limit", r.ContentLength, s.opts.MaxRequestBytes)})
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes)); err != nil {
		writeError(w, bodyError(err))
		return
	}
	req, err := s.decodeHTTP(r, buf.Bytes())
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if req.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.timeout)
		defer cancel()
	}
	resp, err := s.Infer(ctx, &req.InferRequest)
	if err != nil {
		writeError(w, err)
		return
	}
	out := getBuf()
	defer putBuf(out)
	jsonLen, binary := encodeHTTP(out, resp)
	h := w.Header()
	if binary {
		h.Set("Content-Type", "application/octet-stream")
		h.Set(headerLen, strconv.Itoa(jsonLen))
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(out.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(out.Bytes())
}

type httpRequest struct {
	InferRequest
	timeout time.Duration
}

// decodeHTTP decodes an infer body: JSON, or with the binary extension
// JSON followed by the binary inputs in order.
func (s *Server) decodeHTTP(r *http.Request, body []byte) (*httpRequest, error) {
	jsonPart, binary := body, []byte(nil)
	if hl := r.Header.Get(headerLen); hl != "" {
		n, err := strconv.Atoi(hl)
		if err != nil || n < 0 || n > len(body) {
			return nil, errorf(CodeInvalidArgument, "%s: %q for a %d-byte body", headerLen, hl, len(body))
		}
		jsonPart, binary = body[:n], body[n:]
	}
	p := parsers.Get()
	defer parsers.Put(p)
	root, err := p.ParseBytes(jsonPart)
	if err != nil {
		return nil, errorf(CodeInvalidArgument, "malformed JSON request: %w", err)
	}
	if root.Type() != fastjson.TypeObject {
		return nil, errorf(CodeInvalidArgument, "malformed JSON request: a %s, not an object", root.Type())
	}
	req := &httpRequest{InferRequest: InferRequest{Model: r.PathValue("model"), Version: r.PathValue("version")}}
	if req.ID, err = optString(root, "id", "the request"); err != nil {
		return nil, err
	}
	if params := root.Get("parameters"); params != nil {
		if params.Type() != fastjson.TypeObject {
			return nil, errorf(CodeInvalidArgument, "the request's parameters: a %s, not an object", params.Type())
		}
		if b := params.Get("binary_data_output"); b != nil {
			if req.BinaryOutputs, err = b.Bool(); err != nil {
				return nil, errorf(CodeInvalidArgument, "binary_data_output: %s is not true or false", b)
			}
		}
		if t := params.Get("timeout"); t != nil {
			us, err := t.Int64()
			if err != nil || us < 0 {
				return nil, errorf(CodeInvalidArgument, "timeout: %s is not a count of microseconds", t)
			}
			req.timeout = time.Duration(us) * time.Microsecond
		}
	}
	inputs, err := optArray(root, "inputs", "the request")
	if err != nil {
		return nil, err
	}
	for i, in := range inputs {
		if in.Type() != fastjson.TypeObject {
			return nil, errorf(CodeInvalidArgument, "input %d: a %s, not an object", i, in.Type())
		}
		name, err := optString(in, "name", fmt.Sprintf("input %d", i))
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, errorf(CodeInvalidArgument, "input %d has no name", i)
		}
		datatype, err := optString(in, "datatype", fmt.Sprintf("input %q", name))
		if err != nil {
			return nil, err
		}
		dt, err := DTypeOf(datatype)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "input %q: %w", name, err)
		}
		sv := in.Get("shape")
		if sv == nil {
			return nil, errorf(CodeInvalidArgument, "input %q has no shape", name)
		}
		dims, err := sv.Array()
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "input %q: shape %s is not an array", name, sv)
		}
		shape := make([]int64, len(dims))
		for k, d := range dims {
			if shape[k], err = d.Int64(); err != nil {
				return nil, errorf(CodeInvalidArgument, "input %q: shape %s: %s is not an integer", name, sv, d)
			}
		}
		if size := in.Get("parameters", "binary_data_size"); size != nil {
			n, err := size.Int64()
			if err != nil || n < 0 {
				return nil, errorf(CodeInvalidArgument, "input %q: binary_data_size %s is not a byte count", name, size)
			}
			if n > int64(len(binary)) {
				return nil, errorf(CodeInvalidArgument, "input %q: binary_data_size %d, but %d bytes of binary data are left in the body", name, n, len(binary))
			}
			t, err := tensorFromRaw(name, dt, shape, binary[:n], s.opts.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			binary = binary[n:]
			req.Inputs = append(req.Inputs, InferInput{Name: name, Datatype: datatype, Shape: shape, Data: t})
			continue
		}
		data := in.Get("data")
		if data == nil {
			return nil, errorf(CodeInvalidArgument, "input %q has neither data nor binary_data_size", name)
		}
		t, err := newTensor(dt, shape, s.opts.MaxRequestBytes)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "input %q: %w", name, err)
		}
		if err := decodeData(name, data, t); err != nil {
			return nil, err
		}
		req.Inputs = append(req.Inputs, InferInput{Name: name, Datatype: datatype, Shape: shape, Data: t})
	}
	if len(binary) > 0 {
		return nil, errorf(CodeInvalidArgument, "%d bytes of binary data are left after the inputs", len(binary))
	}
	outputs, err := optArray(root, "outputs", "the request")
	if err != nil {
		return nil, err
	}
	for i, o := range outputs {
		name, err := optString(o, "name", fmt.Sprintf("output %d", i))
		if err != nil {
			return nil, err
		}
		ro := RequestedOutput{Name: name}
		if b := o.Get("parameters", "binary_data"); b != nil {
			if ro.Binary, err = b.Bool(); err != nil {
				return nil, errorf(CodeInvalidArgument, "output %q: binary_data %s is not true or false", name, b)
			}
		}
		req.Outputs = append(req.Outputs, ro)
	}
	return req, nil
}

// encodeHTTP writes resp's JSON and then its binary outputs to out, and
// returns the JSON's length and whether any output is binary.
func encodeHTTP(out *bytes.Buffer, resp *InferResponse) (int, bool) {
	b := out.AvailableBuffer()
	b = append(b, `{"model_name":`...)
	b = appendString(b, resp.Model)
	b = append(b, `,"model_version":`...)
	b = appendString(b, resp.Version)
	if resp.ID != "" {
		b = append(b, `,"id":`...)
		b = appendString(b, resp.ID)
	}
	b = append(b, `,"outputs":[`...)
	for i, o := range resp.Outputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, o.Name)
		b = append(b, `,"datatype":`...)
		b = appendString(b, o.Datatype)
		b = append(b, `,"shape":[`...)
		for j, d := range o.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, ']')
		if o.Binary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(o.Data.Nbytes()), 10)
			b = append(b, '}')
		} else {
			b = append(b, `,"data":`...)
			b = appendData(b, o.Data)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	out.Write(b)
	n, binary := out.Len(), false
	for _, o := range resp.Outputs {
		if o.Binary {
			out.Write(rawBytes(o.Data))
			binary = true
		}
	}
	return n, binary
}

// optString is member key of object v as a string ("" when absent).
func optString(v *fastjson.Value, key, what string) (string, error) {
	m := v.Get(key)
	if m == nil {
		return "", nil
	}
	b, err := m.StringBytes()
	if err != nil {
		return "", errorf(CodeInvalidArgument, "%s: %s %s is not a string", what, key, m)
	}
	return string(b), nil
}

// optArray is member key of object v as an array (nil when absent).
func optArray(v *fastjson.Value, key, what string) ([]*fastjson.Value, error) {
	m := v.Get(key)
	if m == nil {
		return nil, nil
	}
	a, err := m.Array()
	if err != nil {
		return nil, errorf(CodeInvalidArgument, "%s: %s is a %s, not an array", what, key, m.Type())
	}
	return a, nil
}
