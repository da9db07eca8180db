package ivalue

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Kind tags what an IValue holds.
type Kind uint8

const (
	KindNone Kind = iota
	KindTensor
	KindInt
	KindDouble
	KindBool
	KindString
	KindDevice
	KindList
	KindTuple
	KindDict
	KindObject // anything else (module objects, futures): Ref holds it
)

var kindNames = [...]string{"None", "Tensor", "int", "float", "bool", "str", "Device", "List", "Tuple", "Dict", "Object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// IValue is the value a runtime slot holds, as c10::IValue. It is a small
// struct copied by value; assigning one never allocates.
type IValue struct {
	kind   Kind
	num    uint64 // int64, float64 bits or bool
	tensor *Tensor
	list   *List // List and Tuple
	str    string
	ref    any // *Dict, or an Object's value
}

// List holds the elements of a List or Tuple IValue. Kernels that build
// lists reuse Items across runs.
type List struct {
	Items []IValue
}

// Dict is an insertion-ordered dictionary.
type Dict struct {
	Keys   []IValue
	Values []IValue
}

// Get returns the value for key k (compared with Equal).
func (d *Dict) Get(k IValue) (IValue, bool) {
	for i, key := range d.Keys {
		if key.Equal(k) {
			return d.Values[i], true
		}
	}
	return IValue{}, false
}

// Set inserts or replaces k.
func (d *Dict) Set(k, v IValue) {
	for i, key := range d.Keys {
		if key.Equal(k) {
			d.Values[i] = v
			return
		}
	}
	d.Keys = append(d.Keys, k)
	d.Values = append(d.Values, v)
}

// None returns the None value (the zero IValue).
func None() IValue { return IValue{} }

// FromTensor wraps a tensor. A nil tensor gives None.
func FromTensor(t *Tensor) IValue {
	if t == nil {
		return IValue{}
	}
	return IValue{kind: KindTensor, tensor: t}
}

// FromInt wraps an int.
func FromInt(v int64) IValue { return IValue{kind: KindInt, num: uint64(v)} }

// FromDouble wraps a float.
func FromDouble(v float64) IValue { return IValue{kind: KindDouble, num: math.Float64bits(v)} }

// FromBool wraps a bool.
func FromBool(v bool) IValue {
	var n uint64
	if v {
		n = 1
	}
	return IValue{kind: KindBool, num: n}
}

// FromString wraps a str.
func FromString(s string) IValue { return IValue{kind: KindString, str: s} }

// FromDevice wraps a device name ("cpu", "cuda:0").
func FromDevice(s string) IValue { return IValue{kind: KindDevice, str: s} }

// ListOf wraps l as a List.
func ListOf(l *List) IValue { return IValue{kind: KindList, list: l} }

// TupleOf wraps l as a Tuple.
func TupleOf(l *List) IValue { return IValue{kind: KindTuple, list: l} }

// NewList makes a List of the given items (no copy).
func NewList(items ...IValue) IValue { return ListOf(&List{Items: items}) }

// NewTuple makes a Tuple of the given items (no copy).
func NewTuple(items ...IValue) IValue { return TupleOf(&List{Items: items}) }

// DictOf wraps d.
func DictOf(d *Dict) IValue { return IValue{kind: KindDict, ref: d} }

// Object wraps any other Go value (module objects, futures).
func Object(v any) IValue { return IValue{kind: KindObject, ref: v} }

// Kind returns the tag.
func (v IValue) Kind() Kind { return v.kind }

// IsNone reports whether v is None.
func (v IValue) IsNone() bool { return v.kind == KindNone }

// IsTensor reports whether v holds a tensor.
func (v IValue) IsTensor() bool { return v.kind == KindTensor }

// Tensor returns the tensor, or nil when v holds none.
func (v IValue) Tensor() *Tensor { return v.tensor }

// Int returns the int (bool as 0/1).
func (v IValue) Int() int64 { return int64(v.num) }

// Double returns the float.
func (v IValue) Double() float64 { return math.Float64frombits(v.num) }

// Bool returns the bool.
func (v IValue) Bool() bool { return v.num != 0 }

// Str returns the string of a str or Device.
func (v IValue) Str() string { return v.str }

// List returns the elements of a List or Tuple.
func (v IValue) List() *List { return v.list }

// Dict returns the dict.
func (v IValue) Dict() *Dict {
	d, _ := v.ref.(*Dict)
	return d
}

// Ref returns the Go value of an Object.
func (v IValue) Ref() any { return v.ref }

// IsNumber reports whether v is an int, float or bool.
func (v IValue) IsNumber() bool {
	return v.kind == KindInt || v.kind == KindDouble || v.kind == KindBool
}

// AsFloat converts an int, float or bool to float64.
func (v IValue) AsFloat() float64 {
	if v.kind == KindDouble {
		return math.Float64frombits(v.num)
	}
	return float64(int64(v.num))
}

// AsInt converts an int, bool or float (truncating) to int64.
func (v IValue) AsInt() int64 {
	if v.kind == KindDouble {
		return int64(math.Float64frombits(v.num))
	}
	return int64(v.num)
}

// Equal compares scalars and strings by value, tensors, lists and dicts by
// identity (as Python's `is` for containers in dict keys).
func (v IValue) Equal(o IValue) bool {
	if v.kind != o.kind {
		if v.IsNumber() && o.IsNumber() {
			return v.AsFloat() == o.AsFloat()
		}
		return false
	}
	switch v.kind {
	case KindNone:
		return true
	case KindInt, KindBool:
		return v.num == o.num
	case KindDouble:
		return v.Double() == o.Double()
	case KindString, KindDevice:
		return v.str == o.str
	case KindTensor:
		return v.tensor == o.tensor
	case KindList, KindTuple:
		if v.list == o.list {
			return true
		}
		if v.kind == KindTuple && len(v.list.Items) == len(o.list.Items) {
			for i := range v.list.Items {
				if !v.list.Items[i].Equal(o.list.Items[i]) {
					return false
				}
			}
			return true
		}
		return false
	case KindDict:
		return v.Dict() == o.Dict()
	}
	// Objects compare by identity; values of types Go cannot compare
	// (slices, maps) are never equal rather than a panic.
	if v.ref == nil || o.ref == nil {
		return v.ref == o.ref
	}
	if !reflect.TypeOf(v.ref).Comparable() || !reflect.TypeOf(o.ref).Comparable() {
		return false
	}
	return v.ref == o.ref
}

// Clone deep-copies tensors and containers, so the result survives the
// next Run of the runtime that produced v. Copying a tensor on a device
// may fail: code that may clone one there calls CloneErr (Clone panics
// with the error).
func (v IValue) Clone() IValue {
	c, err := v.CloneErr()
	if err != nil {
		panic(err)
	}
	return c
}

// CloneErr is Clone, returning the error of a copy on a device.
func (v IValue) CloneErr() (IValue, error) {
	switch v.kind {
	case KindTensor:
		t, err := v.tensor.CloneErr()
		if err != nil {
			return v, err
		}
		return FromTensor(t), nil
	case KindList, KindTuple:
		items := make([]IValue, len(v.list.Items))
		for i, it := range v.list.Items {
			c, err := it.CloneErr()
			if err != nil {
				return v, err
			}
			items[i] = c
		}
		return IValue{kind: v.kind, list: &List{Items: items}}, nil
	case KindDict:
		src := v.Dict()
		d := &Dict{Keys: make([]IValue, len(src.Keys)), Values: make([]IValue, len(src.Values))}
		for i := range src.Keys {
			k, err := src.Keys[i].CloneErr()
			if err != nil {
				return v, err
			}
			e, err := src.Values[i].CloneErr()
			if err != nil {
				return v, err
			}
			d.Keys[i], d.Values[i] = k, e
		}
		return DictOf(d), nil
	}
	return v, nil
}

// String prints the value in a Python-like form.
func (v IValue) String() string {
	switch v.kind {
	case KindNone:
		return "None"
	case KindTensor:
		return v.tensor.String()
	case KindInt:
		return fmt.Sprint(v.Int())
	case KindDouble:
		return fmt.Sprint(v.Double())
	case KindBool:
		if v.Bool() {
			return "True"
		}
		return "False"
	case KindString:
		return fmt.Sprintf("%q", v.str)
	case KindDevice:
		return "device(" + v.str + ")"
	case KindList, KindTuple:
		parts := make([]string, len(v.list.Items))
		for i, it := range v.list.Items {
			parts[i] = it.String()
		}
		if v.kind == KindTuple {
			return "(" + strings.Join(parts, ", ") + ")"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case KindDict:
		d := v.Dict()
		parts := make([]string, len(d.Keys))
		for i := range d.Keys {
			parts[i] = d.Keys[i].String() + ": " + d.Values[i].String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("Object(%v)", v.ref)
}
