package serve

import (
	"fmt"
	"math"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/gosr/gosr/ivalue"
)

// JSON tensor data: the protocol's "data" member holds a tensor's
// elements row-major, flat ([1,2,3,4]) or nested as the shape
// ([[1,2],[3,4]]). decodeData reads either from the parsed request
// (fastjson's values, which keep each number's text) straight into the
// tensor's storage.

// decodeData fills t (zeroed, of its dtype and shape) from data.
func decodeData(name string, data *fastjson.Value, t *ivalue.Tensor) error {
	n := t.Numel()
	d := dataDecoder{name: name, t: t, n: n}
	if data.Type() != fastjson.TypeArray && n != 1 {
		return d.bad("not an array")
	}
	if err := d.walk(data, 0); err != nil {
		return err
	}
	if d.count != n {
		return d.bad("%d elements for shape %v (%d elements)", d.count, t.Sizes(), n)
	}
	return nil
}

// dataDecoder walks a data member's nested arrays in row-major order.
type dataDecoder struct {
	name     string
	t        *ivalue.Tensor
	n, count int
	num      [64]byte // a number's text, for parseJSONFloat
}

func (d *dataDecoder) bad(format string, args ...any) error {
	return errorf(CodeInvalidArgument, "input %q: data: "+format, append([]any{d.name}, args...)...)
}

func (d *dataDecoder) walk(v *fastjson.Value, depth int) error {
	if v.Type() == fastjson.TypeArray {
		if depth > d.t.Dim() {
			return d.bad("nested deeper than the shape %v", d.t.Sizes())
		}
		items, _ := v.Array()
		for _, it := range items {
			if err := d.walk(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if d.count >= d.n {
		return d.bad("more than the %d elements of shape %v", d.n, d.t.Sizes())
	}
	if err := setElem(d.t, d.count, v, d.num[:0]); err != nil {
		return d.bad("element %d: %v", d.count, err)
	}
	d.count++
	return nil
}

// setElem sets element i of t to v; scratch is room for v's text.
func setElem(t *ivalue.Tensor, i int, v *fastjson.Value, scratch []byte) error {
	dt := t.DType()
	switch dt {
	case ivalue.Bool:
		b, err := v.Bool()
		if err != nil {
			return fmt.Errorf("%s is not true or false", v)
		}
		t.B()[i] = b
		return nil
	case ivalue.Float32, ivalue.Float64, ivalue.Float16, ivalue.BFloat16:
		bits := 32
		if dt == ivalue.Float64 {
			bits = 64
		}
		f, ok := 0.0, false
		if v.Type() == fastjson.TypeNumber {
			f, ok = parseJSONFloat(v.MarshalTo(scratch), bits)
		}
		if !ok {
			// Not a JSON number, or out of the dtype's range: fastjson
			// also takes "inf" and "nan" (and saturates), as before.
			var err error
			if f, err = v.Float64(); err != nil {
				return fmt.Errorf("%s is not a number", v)
			}
		}
		switch dt {
		case ivalue.Float32:
			t.F32()[i] = float32(f)
		case ivalue.Float64:
			t.F64()[i] = f
		case ivalue.Float16:
			t.U16()[i] = ivalue.Float32ToHalf(float32(f))
		case ivalue.BFloat16:
			t.U16()[i] = ivalue.Float32ToBFloat16(float32(f))
		}
		return nil
	}
	x, err := v.Int64()
	if err != nil {
		return fmt.Errorf("%s is not an integer", v)
	}
	var lo, hi int64
	switch dt {
	case ivalue.Int64:
		t.I64()[i] = x
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
	if x < lo || x > hi {
		return fmt.Errorf("%d is out of the range of %s", x, Datatype(dt))
	}
	switch dt {
	case ivalue.Int32:
		t.I32()[i] = int32(x)
	case ivalue.Int16:
		t.I16()[i] = int16(x)
	case ivalue.Int8:
		t.I8()[i] = int8(x)
	case ivalue.Uint8:
		t.U8()[i] = uint8(x)
	}
	return nil
}

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
			f(float64(ivalue.BFloat16ToFloat32(t.U16()[o+i])), 32)
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
