package ivalue

import (
	"fmt"

	"gorgonia.org/tensor"
)

// FromDense views a gorgonia Dense as a Tensor without copying: the
// tensor's storage is the Dense's backing slice. Only row-major,
// contiguous Dense tensors of supported element types can be viewed.
func FromDense(d *tensor.Dense) (*Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("ivalue: nil Dense")
	}
	if !d.IsNativelyAccessible() || d.RequiresIterator() {
		return nil, fmt.Errorf("ivalue: Dense with shape %v is not a contiguous row-major view; call Materialize first", d.Shape())
	}
	shape := []int(d.Shape())
	var backing any
	if d.IsScalar() {
		// Data() returns a scalar Dense's value, a copy: view its
		// one-element backing slice instead.
		shape = []int{}
		switch d.Dtype() {
		case tensor.Float32:
			backing = d.Float32s()
		case tensor.Float64:
			backing = d.Float64s()
		case tensor.Int64:
			backing = d.Int64s()
		case tensor.Int32:
			backing = d.Int32s()
		case tensor.Int8:
			backing = d.Int8s()
		case tensor.Uint8:
			backing = d.Uint8s()
		case tensor.Bool:
			backing = d.Bools()
		}
	} else {
		backing = d.Data()
	}
	switch data := backing.(type) {
	case []float32:
		return wrap(Float32, data, shape), nil
	case []float64:
		return wrap(Float64, data, shape), nil
	case []int64:
		return wrap(Int64, data, shape), nil
	case []int32:
		return wrap(Int32, data, shape), nil
	case []int8:
		return wrap(Int8, data, shape), nil
	case []uint8:
		return wrap(Uint8, data, shape), nil
	case []bool:
		return wrap(Bool, data, shape), nil
	}
	return nil, fmt.Errorf("ivalue: Dense of %v is not supported", d.Dtype())
}

// ToDense views t as a gorgonia Dense without copying (the Dense's backing
// slice is t's storage). t must be contiguous; 0-d tensors become
// gorgonia scalars of shape (). float16/bfloat16 have no gorgonia type.
func (t *Tensor) ToDense() (*tensor.Dense, error) {
	if !t.IsContiguous() {
		return nil, fmt.Errorf("ivalue: ToDense of a non-contiguous tensor %v; call Contiguous first", t.sizes)
	}
	shape := tensor.Shape(append([]int(nil), t.sizes...))
	if len(t.sizes) == 0 {
		shape = tensor.ScalarShape()
	}
	var backing any
	switch t.dtype {
	case Float32:
		backing = contigOf(t, t.F32())
	case Float64:
		backing = contigOf(t, t.F64())
	case Int64:
		backing = contigOf(t, t.I64())
	case Int32:
		backing = contigOf(t, t.I32())
	case Int8:
		backing = contigOf(t, t.I8())
	case Uint8:
		backing = contigOf(t, t.U8())
	case Bool:
		backing = contigOf(t, t.B())
	default:
		return nil, fmt.Errorf("ivalue: %s has no gorgonia dtype", t.dtype)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing)), nil
}
