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

// jsonRequest is the JSON part of an infer request.
type jsonRequest struct {
	ID         string         `json:"id"`
	Parameters map[string]any `json:"parameters"`
	Inputs     []struct {
		Name       string          `json:"name"`
		Shape      []int64         `json:"shape"`
		Datatype   string          `json:"datatype"`
		Parameters map[string]any  `json:"parameters"`
		Data       json.RawMessage `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"outputs"`
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (s *Server) handleInfer(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, errorf(CodeUnavailable, "the server is shutting down"))
		return
	}
	if r.ContentLength > s.opts.MaxRequestBytes {
		writeError(w, &Error{Code: CodeTooLarge, Msg: fmt.Sprintf("a %d-byte body is over the server's %d-byte limit", r.ContentLength, s.opts.MaxRequestBytes)})
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			bufPool.Put(buf)
		}
	}()
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
	out := bufPool.Get().(*bytes.Buffer)
	out.Reset()
	defer func() {
		if out.Cap() <= 1<<20 {
			bufPool.Put(out)
		}
	}()
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
	var jr jsonRequest
	if err := json.Unmarshal(jsonPart, &jr); err != nil {
		return nil, errorf(CodeInvalidArgument, "malformed JSON request: %w", err)
	}
	req := &httpRequest{InferRequest: InferRequest{Model: r.PathValue("model"), Version: r.PathValue("version"), ID: jr.ID}}
	if b, ok := jr.Parameters["binary_data_output"].(bool); ok {
		req.BinaryOutputs = b
	}
	if t, ok := jr.Parameters["timeout"].(float64); ok && t > 0 {
		req.timeout = time.Duration(t) * time.Microsecond
	}
	for _, in := range jr.Inputs {
		if in.Name == "" {
			return nil, errorf(CodeInvalidArgument, "an input has no name")
		}
		dt, err := DTypeOf(in.Datatype)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "input %q: %w", in.Name, err)
		}
		if in.Shape == nil {
			return nil, errorf(CodeInvalidArgument, "input %q has no shape", in.Name)
		}
		if size, ok := in.Parameters["binary_data_size"]; ok {
			n, ok := size.(float64)
			if !ok || n < 0 || n != float64(int64(n)) {
				return nil, errorf(CodeInvalidArgument, "input %q: binary_data_size %v is not a byte count", in.Name, size)
			}
			if int(n) > len(binary) {
				return nil, errorf(CodeInvalidArgument, "input %q: binary_data_size %d, but %d bytes of binary data are left in the body", in.Name, int(n), len(binary))
			}
			t, err := tensorFromRaw(in.Name, dt, in.Shape, binary[:int(n)], s.opts.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			binary = binary[int(n):]
			req.Inputs = append(req.Inputs, InferInput{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: t})
			continue
		}
		if in.Data == nil {
			return nil, errorf(CodeInvalidArgument, "input %q has neither data nor binary_data_size", in.Name)
		}
		t, err := newTensor(dt, in.Shape, s.opts.MaxRequestBytes)
		if err != nil {
			return nil, errorf(CodeInvalidArgument, "input %q: %w", in.Name, err)
		}
		if err := decodeData(in.Name, in.Data, t); err != nil {
			return nil, err
		}
		req.Inputs = append(req.Inputs, InferInput{Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: t})
	}
	if len(binary) > 0 {
		return nil, errorf(CodeInvalidArgument, "%d bytes of binary data are left after the inputs", len(binary))
	}
	for _, o := range jr.Outputs {
		ro := RequestedOutput{Name: o.Name}
		if b, ok := o.Parameters["binary_data"].(bool); ok {
			ro.Binary = b
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
