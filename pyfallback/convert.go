package pyfallback

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
)

// toPy converts a gosr value to a new Python reference (interpreter
// thread only). Tensors become _gosr tensor views of gosr's memory (no
// copy; a non-contiguous tensor is made contiguous first); *Object
// handles of this interpreter pass as themselves.
func (in *interp) toPy(v ivalue.IValue) (uintptr, error) {
	c := in.c
	switch v.Kind() {
	case ivalue.KindNone:
		in.incref(c.None)
		return c.None, nil
	case ivalue.KindInt:
		return in.long(v.Int()), nil
	case ivalue.KindDouble:
		return in.float(v.Double()), nil
	case ivalue.KindBool:
		if v.Bool() {
			return in.call(c.PyBool_FromLong, 1), nil
		}
		return in.call(c.PyBool_FromLong, 0), nil
	case ivalue.KindString, ivalue.KindDevice:
		return in.str(v.Str()), nil
	case ivalue.KindTensor:
		return in.tensorToPy(v.Tensor())
	case ivalue.KindList, ivalue.KindTuple:
		items := v.List().Items
		var o uintptr
		if v.Kind() == ivalue.KindList {
			o = in.call(c.PyList_New, uintptr(len(items)))
		} else {
			o = in.call(c.PyTuple_New, uintptr(len(items)))
		}
		for i, it := range items {
			e, err := in.toPy(it)
			if err != nil {
				in.decref(o)
				return 0, err
			}
			if v.Kind() == ivalue.KindList {
				in.call(c.PyList_SetItem, o, uintptr(i), e)
			} else {
				in.call(c.PyTuple_SetItem, o, uintptr(i), e)
			}
		}
		return o, nil
	case ivalue.KindDict:
		d := v.Dict()
		o := in.call(c.PyDict_New)
		for i := range d.Keys {
			k, err := in.toPy(d.Keys[i])
			if err != nil {
				in.decref(o)
				return 0, err
			}
			val, err := in.toPy(d.Values[i])
			if err != nil {
				in.decref(k)
				in.decref(o)
				return 0, err
			}
			in.call(c.PyDict_SetItem, o, k, val)
			in.decref(k)
			in.decref(val)
		}
		return o, nil
	case ivalue.KindObject:
		if h, ok := v.Ref().(*Object); ok {
			if h.in != in {
				return 0, fmt.Errorf("a Python object of interpreter %d passed to interpreter %d (replicate it with a Movable)", h.in.id, in.id)
			}
			if h.lease != in.lease.Load() || h.ptr == 0 {
				return 0, ErrClosed
			}
			in.incref(h.ptr)
			return h.ptr, nil
		}
	}
	return 0, fmt.Errorf("a %s value cannot cross into Python", v.Kind())
}

func (in *interp) tensorToPy(t *ivalue.Tensor) (uintptr, error) {
	if t == nil {
		return 0, fmt.Errorf("a nil tensor")
	}
	if !t.IsContiguous() {
		t = t.Contiguous()
	}
	shape := in.call(in.c.PyTuple_New, uintptr(t.Dim()))
	for i, d := range t.Sizes() {
		in.call(in.c.PyTuple_SetItem, shape, uintptr(i), in.long(int64(d)))
	}
	var addr uintptr
	if t.Numel() > 0 {
		addr = uintptr(unsafe.Pointer(&t.Storage().Data[t.Offset()*t.DType().Size()]))
	}
	args := in.tuple(in.long(int64(addr)), in.long(int64(t.DType())), shape)
	r := in.callObj(in.fTensor, args)
	in.decref(args)
	if r == 0 {
		return 0, in.fetchErr()
	}
	return r, nil
}

// fromPy converts a Python value (borrowed) to a gosr value: None, bool,
// int, float, str, list, tuple, dict and _gosr.Out tensors (copied into
// a new gosr tensor); anything else stays in Python as an *Object.
func (in *interp) fromPy(o uintptr, lease uint64) (ivalue.IValue, error) {
	c := in.c
	if o == c.None {
		return ivalue.None(), nil
	}
	switch typeOf(o) {
	case c.BoolType:
		return ivalue.FromBool(o == c.True), nil
	case c.LongType:
		v := int64(in.call(c.PyLong_AsLongLong, o))
		if v == -1 && in.call(c.PyErr_Occurred) != 0 {
			return ivalue.None(), in.fetchErr()
		}
		return ivalue.FromInt(v), nil
	case c.FloatType:
		return ivalue.FromDouble(c.pyFloatAsDouble(o)), nil
	case c.UnicodeType:
		s, ok := in.goStr(o)
		if !ok {
			return ivalue.None(), fmt.Errorf("a str that is not valid UTF-8")
		}
		return ivalue.FromString(s), nil
	case c.ListType, c.TupleType:
		var n int
		get := c.PyList_GetItem
		if typeOf(o) == c.ListType {
			n = int(in.call(c.PyList_Size, o))
		} else {
			n = int(in.call(c.PyTuple_Size, o))
			get = c.PyTuple_GetItem
		}
		items := make([]ivalue.IValue, n)
		for i := range items {
			v, err := in.fromPy(in.call(get, o, uintptr(i)), lease)
			if err != nil {
				return ivalue.None(), err
			}
			items[i] = v
		}
		if typeOf(o) == c.ListType {
			return ivalue.ListOf(&ivalue.List{Items: items}), nil
		}
		return ivalue.TupleOf(&ivalue.List{Items: items}), nil
	case c.DictType:
		d := &ivalue.Dict{}
		f := in.outs.push() // pos, key, value
		defer in.outs.pop()
		for in.call(c.PyDict_Next, o, uintptr(unsafe.Pointer(&f[0])), uintptr(unsafe.Pointer(&f[1])), uintptr(unsafe.Pointer(&f[2]))) != 0 {
			k, v := f[1], f[2]
			kv, err := in.fromPy(k, lease)
			if err != nil {
				return ivalue.None(), err
			}
			vv, err := in.fromPy(v, lease)
			if err != nil {
				return ivalue.None(), err
			}
			d.Keys = append(d.Keys, kv)
			d.Values = append(d.Values, vv)
		}
		return ivalue.DictOf(d), nil
	case in.outType:
		t, err := in.outTensor(o, nil)
		if err != nil {
			return ivalue.None(), err
		}
		return ivalue.FromTensor(t), nil
	}
	in.incref(o)
	return ivalue.Object(&Object{in: in, lease: lease, ptr: o}), nil
}

// outTensor copies an _gosr.Out (addr, code, shape, keep) into dst
// (resized; reused when its size allows) or a new tensor.
//
//go:nocheckptr
func (in *interp) outTensor(o uintptr, dst *ivalue.Tensor) (*ivalue.Tensor, error) {
	c := in.c
	addr := uintptr(in.call(c.PyLong_AsLongLong, in.call(c.PyTuple_GetItem, o, 0)))
	code := ivalue.DType(in.call(c.PyLong_AsLongLong, in.call(c.PyTuple_GetItem, o, 1)))
	shapeObj := in.call(c.PyTuple_GetItem, o, 2)
	nd := int(in.call(c.PyTuple_Size, shapeObj))
	var sizesBuf [8]int
	sizes := sizesBuf[:0]
	if nd > len(sizesBuf) {
		sizes = make([]int, 0, nd)
	}
	n := 1
	for i := 0; i < nd; i++ {
		d := int(in.call(c.PyLong_AsLongLong, in.call(c.PyTuple_GetItem, shapeObj, uintptr(i))))
		if d < 0 {
			return nil, fmt.Errorf("a result tensor with a negative dimension")
		}
		sizes = append(sizes, d)
		n *= d
	}
	if code <= ivalue.Undefined || code > ivalue.Bool {
		return nil, fmt.Errorf("a result tensor of unknown dtype code %d", code)
	}
	if dst == nil {
		dst = ivalue.NewTensor(code, sizes...)
	} else {
		dst.Resize(code, sizes)
	}
	nb := n * code.Size()
	if nb > 0 {
		if addr == 0 {
			return nil, fmt.Errorf("a result tensor with no data")
		}
		src := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), addr)), nb)
		copy(dst.Storage().Data[dst.Offset()*code.Size():], src)
	}
	return dst, nil
}

var _ = math.Float64bits
