package serve

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
)

// JSON tensor data: the protocol's "data" member holds a tensor's
// elements row-major, flat ([1,2,3,4]) or nested as the shape
// ([[1,2],[3,4]]). decodeData reads either straight into the tensor's
// storage, one number at a time, without building Go values for them.

// decodeData fills t (zeroed, of its dtype and shape) from raw JSON.
func decodeData(name string, raw []byte, t *ivalue.Tensor) error {
	n := t.Numel()
	i, count, depth := 0, 0, 0
	bad := func(format string, args ...any) error {
		return errorf(CodeInvalidArgument, "input %q: data: "+format, append([]any{name}, args...)...)
	}
	dt := t.DType()
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
			continue
		case c == '[':
			depth++
			i++
			continue
		case c == ']':
			depth--
			if depth < 0 {
				return bad("unbalanced ']' at byte %d", i)
			}
			i++
			continue
		}
		if depth == 0 && count == 0 && n != 1 {
			return bad("not an array")
		}
		j := i
		for j < len(raw) && raw[j] != ',' && raw[j] != ']' && raw[j] != ' ' && raw[j] != '\n' && raw[j] != '\t' && raw[j] != '\r' {
			j++
		}
		tok := raw[i:j]
		if count >= n {
			return bad("more than the %d elements of shape %v", n, t.Sizes())
		}
		if err := setElem(t, dt, count, tok); err != nil {
			return bad("element %d: %v", count, err)
		}
		count++
		i = j
	}
	if depth != 0 {
		return bad("unbalanced '['")
	}
	if count != n {
		return bad("%d elements for shape %v (%d elements)", count, t.Sizes(), n)
	}
	return nil
}

func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func setElem(t *ivalue.Tensor, dt ivalue.DType, i int, tok []byte) error {
	s := str(tok)
	switch dt {
	case ivalue.Bool:
		switch s {
		case "true":
			t.B()[i] = true
		case "false":
			t.B()[i] = false
		default:
			return fmt.Errorf("%q is not true or false", s)
		}
		return nil
	case ivalue.Float32, ivalue.Float64, ivalue.Float16, ivalue.BFloat16:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		switch dt {
		case ivalue.Float32:
			t.F32()[i] = float32(f)
		case ivalue.Float64:
			t.F64()[i] = f
		case ivalue.Float16:
			t.U16()[i] = ivalue.Float32ToHalf(float32(f))
		case ivalue.BFloat16:
			t.U16()[i] = float32ToBF16(float32(f))
		}
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	var lo, hi int64
	switch dt {
	case ivalue.Int64:
		t.I64()[i] = v
		return nil
	case ivalue.Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	case ivalue.Int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case ivalue.Int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case ivalue.Uint8:
		lo, hi = 0, math.MaxUint8
	}
	if v < lo || v > hi {
		return fmt.Errorf("%d is out of the range of %s", v, Datatype(dt))
	}
	switch dt {
	case ivalue.Int32:
		t.I32()[i] = int32(v)
	case ivalue.Int16:
		t.I16()[i] = int16(v)
	case ivalue.Int8:
		t.I8()[i] = int8(v)
	case ivalue.Uint8:
		t.U8()[i] = uint8(v)
	}
	return nil
}

// float32ToBF16 rounds f to bfloat16, to nearest even.
func float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40 // a quiet NaN stays a NaN
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

func bf16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// appendData appends t's elements (contiguous) as a flat JSON array. A
// NaN or infinity, which JSON cannot hold, is written as null.
func appendData(b []byte, t *ivalue.Tensor) []byte {
	b = append(b, '[')
	n := t.Numel()
	o := t.Offset() // t may be a view (a request's rows of a batch)
	f := func(x float64, bits int) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, x, 'g', -1, bits)
		}
	}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		switch t.DType() {
		case ivalue.Float32:
			f(float64(t.F32()[o+i]), 32)
		case ivalue.Float64:
			f(t.F64()[o+i], 64)
		case ivalue.Float16:
			f(float64(ivalue.HalfToFloat32(t.U16()[o+i])), 32)
		case ivalue.BFloat16:
			f(float64(bf16ToFloat32(t.U16()[o+i])), 32)
		case ivalue.Int64:
			b = strconv.AppendInt(b, t.I64()[o+i], 10)
		case ivalue.Int32:
			b = strconv.AppendInt(b, int64(t.I32()[o+i]), 10)
		case ivalue.Int16:
			b = strconv.AppendInt(b, int64(t.I16()[o+i]), 10)
		case ivalue.Int8:
			b = strconv.AppendInt(b, int64(t.I8()[o+i]), 10)
		case ivalue.Uint8:
			b = strconv.AppendInt(b, int64(t.U8()[o+i]), 10)
		case ivalue.Bool:
			b = strconv.AppendBool(b, t.B()[o+i])
		}
	}
	return append(b, ']')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
