// Package loaders reads and writes the file formats gosr takes models and
// test fixtures from.
package loaders

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"sort"
	"syscall"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
)

// TensorFile is the content of a safetensors file.
type TensorFile struct {
	Names    []string // tensor names in file order of their data offsets
	Tensors  map[string]*ivalue.Tensor
	Metadata map[string]string
}

// maxHeader bounds the JSON header so that a corrupt length cannot make us
// allocate or scan gigabytes (the reference implementation uses 100 MB).
const maxHeader = 100 << 20

var stDTypes = map[string]ivalue.DType{
	"F32": ivalue.Float32, "F64": ivalue.Float64, "F16": ivalue.Float16, "BF16": ivalue.BFloat16,
	"I64": ivalue.Int64, "I32": ivalue.Int32, "I16": ivalue.Int16, "I8": ivalue.Int8,
	"U8": ivalue.Uint8, "BOOL": ivalue.Bool,
}

func stDTypeName(d ivalue.DType) (string, bool) {
	for k, v := range stDTypes {
		if v == d {
			return k, true
		}
	}
	return "", false
}

// ReadSafetensors maps path into memory (copy-on-write, so a kernel that
// writes into a fixture tensor cannot touch the file) and parses it. The
// tensors view the mapping, which is never unmapped: the tensors may
// outlive the TensorFile. If mapping fails the file is read once instead.
func ReadSafetensors(path string) (*TensorFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	var data []byte
	if size := st.Size(); size > 0 && size == int64(int(size)) {
		data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
		if err != nil {
			data = nil
		}
	}
	if data == nil {
		if data, err = io.ReadAll(f); err != nil {
			return nil, fmt.Errorf("safetensors %s: %w", path, err)
		}
	}
	tf, err := ParseSafetensors(data)
	if err != nil {
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	return tf, nil
}

type stEntry struct {
	DType       string `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets []int  `json:"data_offsets"`
}

// ParseSafetensors parses a safetensors image. Tensors view data without a
// copy, except a tensor whose bytes are not aligned to its element size,
// which is copied (typed access to misaligned memory is not safe in Go).
func ParseSafetensors(data []byte) (*TensorFile, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("truncated: %d bytes, expected at least the 8-byte header length", len(data))
	}
	hlen := binary.LittleEndian.Uint64(data[:8])
	if hlen > maxHeader || hlen > uint64(len(data)-8) {
		return nil, fmt.Errorf("header length %d goes beyond the file (%d bytes after the length)", hlen, len(data)-8)
	}
	header := data[8 : 8+hlen]
	body := data[8+hlen:]

	names, raw, err := decodeHeader(header)
	if err != nil {
		return nil, err
	}
	tf := &TensorFile{Tensors: make(map[string]*ivalue.Tensor, len(names)), Metadata: map[string]string{}}
	type span struct {
		name       string
		begin, end int
	}
	spans := make([]span, 0, len(names))
	for _, name := range names {
		msg := raw[name]
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &tf.Metadata); err != nil {
				return nil, fmt.Errorf("__metadata__: expected an object of strings: %v", err)
			}
			if tf.Metadata == nil {
				tf.Metadata = map[string]string{}
			}
			continue
		}
		var e stEntry
		dec := json.NewDecoder(bytes.NewReader(msg))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("tensor %q: expected {dtype, shape, data_offsets}: %v", name, err)
		}
		t, err := makeTensor(name, e, body)
		if err != nil {
			return nil, err
		}
		tf.Tensors[name] = t
		spans = append(spans, span{name, e.DataOffsets[0], e.DataOffsets[1]})
	}
	// Stable: empty tensors sharing an offset keep header order.
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].begin < spans[j].begin })
	for i, s := range spans {
		if i > 0 && s.begin < spans[i-1].end {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] overlap tensor %q [%d, %d]",
				s.name, s.begin, s.end, spans[i-1].name, spans[i-1].begin, spans[i-1].end)
		}
		tf.Names = append(tf.Names, s.name)
	}
	return tf, nil
}

// decodeHeader returns the header's keys in file order (JSON objects lose
// order in a Go map) and their raw values.
func decodeHeader(header []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(header))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("header: expected a JSON object: %v", orTok(err, tok))
	}
	var names []string
	raw := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("header: bad JSON: %v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("header: expected a key, got %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("header: bad JSON for %q: %v", name, err)
		}
		if _, dup := raw[name]; dup {
			return nil, nil, fmt.Errorf("header: duplicate tensor %q", name)
		}
		raw[name] = v
		names = append(names, name)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, fmt.Errorf("header: unterminated JSON object: %v", orTok(err, tok))
	}
	// Only padding spaces may follow the object.
	rest, _ := io.ReadAll(dec.Buffered())
	if len(bytes.Trim(rest, " \t\r\n")) != 0 {
		return nil, nil, fmt.Errorf("header: trailing data after the JSON object")
	}
	return names, raw, nil
}

func orTok(err error, tok json.Token) any {
	if err != nil {
		return err
	}
	return fmt.Sprintf("got %v", tok)
}

func makeTensor(name string, e stEntry, body []byte) (*ivalue.Tensor, error) {
	dt, ok := stDTypes[e.DType]
	if !ok {
		return nil, fmt.Errorf("tensor %q: unknown dtype %q (expected F32, F64, F16, BF16, I64, I32, I16, I8, U8 or BOOL)", name, e.DType)
	}
	if e.Shape == nil {
		return nil, fmt.Errorf("tensor %q: missing shape", name)
	}
	if len(e.DataOffsets) != 2 {
		return nil, fmt.Errorf("tensor %q: expected data_offsets [begin, end], got %v", name, e.DataOffsets)
	}
	b, end := e.DataOffsets[0], e.DataOffsets[1]
	if b < 0 || end < b || end > len(body) {
		return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] out of range of the %d data bytes", name, b, end, len(body))
	}
	nbytes := uint64(dt.Size())
	for _, s := range e.Shape {
		if s < 0 {
			return nil, fmt.Errorf("tensor %q: negative size in shape %v", name, e.Shape)
		}
		hi, lo := bits.Mul64(nbytes, uint64(s))
		if hi != 0 || lo > uint64(len(body)) {
			return nil, fmt.Errorf("tensor %q: shape %v of %s is larger than the file", name, e.Shape, e.DType)
		}
		nbytes = lo
	}
	if nbytes != uint64(end-b) {
		return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets [%d, %d] hold %d", name, e.Shape, e.DType, nbytes, b, end, end-b)
	}
	buf := body[b:end:end]
	if len(buf) > 0 && uintptr(unsafe.Pointer(&buf[0]))%uintptr(dt.Size()) != 0 {
		buf = append(ivalue.AlignedBytes(len(buf))[:0], buf...)
	}
	if dt == ivalue.Bool {
		for i, c := range buf {
			if c > 1 {
				return nil, fmt.Errorf("tensor %q: bool element %d is %d, expected 0 or 1", name, i, c)
			}
		}
	}
	t, err := ivalue.FromStorage(dt, &ivalue.Storage{Data: buf}, 0, e.Shape, nil)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %v", name, err)
	}
	return t, nil
}

// WriteSafetensors writes tensors (any strides; written in logical order)
// under names, in that order, with optional metadata. The header is padded
// with spaces so that the data starts 8-byte aligned.
func WriteSafetensors(path string, names []string, tensors []*ivalue.Tensor, metadata map[string]string) error {
	data, err := EncodeSafetensors(names, tensors, metadata)
	if err != nil {
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("safetensors %s: %w", path, err)
	}
	return nil
}

// EncodeSafetensors is WriteSafetensors to memory.
func EncodeSafetensors(names []string, tensors []*ivalue.Tensor, metadata map[string]string) ([]byte, error) {
	if len(names) != len(tensors) {
		return nil, fmt.Errorf("%d names for %d tensors", len(names), len(tensors))
	}
	var h bytes.Buffer
	h.WriteByte('{')
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeJSON(&h, k)
			h.WriteByte(':')
			writeJSON(&h, metadata[k])
		}
		h.WriteByte('}')
	}
	seen := map[string]bool{}
	off := 0
	for i, name := range names {
		t := tensors[i]
		if name == "__metadata__" || seen[name] {
			return nil, fmt.Errorf("tensor %q: reserved or duplicate name", name)
		}
		seen[name] = true
		if t == nil {
			return nil, fmt.Errorf("tensor %q: nil", name)
		}
		dn, ok := stDTypeName(t.DType())
		if !ok {
			return nil, fmt.Errorf("tensor %q: dtype %s has no safetensors name", name, t.DType())
		}
		if h.Len() > 1 {
			h.WriteByte(',')
		}
		writeJSON(&h, name)
		shape := t.Sizes()
		if shape == nil {
			shape = []int{}
		}
		fmt.Fprintf(&h, `:{"dtype":"%s","shape":`, dn)
		writeJSON(&h, shape)
		fmt.Fprintf(&h, `,"data_offsets":[%d,%d]}`, off, off+t.Nbytes())
		off += t.Nbytes()
	}
	h.WriteByte('}')
	for (8+h.Len())%8 != 0 {
		h.WriteByte(' ')
	}
	out := make([]byte, 8, 8+h.Len()+off)
	binary.LittleEndian.PutUint64(out, uint64(h.Len()))
	out = append(out, h.Bytes()...)
	for _, t := range tensors {
		c := t.Contiguous()
		es := c.DType().Size()
		out = append(out, c.Storage().Data[c.Offset()*es:(c.Offset()+c.Numel())*es]...)
	}
	return out, nil
}

func writeJSON(b *bytes.Buffer, v any) {
	enc, _ := json.Marshal(v) // strings and int slices always marshal
	b.Write(enc)
}
