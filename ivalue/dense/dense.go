// Package dense converts between gosr's tensors and gorgonia's Dense
// tensors, without copying. It is a package of its own so that ivalue,
// which every gosr package imports, does not pull in gorgonia.
package dense

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/gosr/gosr/ivalue"
)

// FromDense views a gorgonia Dense as a Tensor without copying: the
// tensor's storage is the Dense's backing slice. Only row-major,
// contiguous Dense tensors of supported element types can be viewed.
func FromDense(d *tensor.Dense) (*ivalue.Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("dense: nil Dense")
	}
	if !d.IsNativelyAccessible() || d.RequiresIterator() {
		return nil, fmt.Errorf("dense: Dense with shape %v is not a contiguous row-major view; call Materialize first", d.Shape())
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
		return ivalue.F32Tensor(data, shape...), nil
	case []float64:
		return ivalue.F64Tensor(data, shape...), nil
	case []int64:
		return ivalue.I64Tensor(data, shape...), nil
	case []int32:
		return ivalue.I32Tensor(data, shape...), nil
	case []int8:
		return ivalue.I8Tensor(data, shape...), nil
	case []uint8:
		return ivalue.U8Tensor(data, shape...), nil
	case []bool:
		return ivalue.BoolTensor(data, shape...), nil
	}
	return nil, fmt.Errorf("dense: Dense of %v is not supported", d.Dtype())
}

// ToDense views t as a gorgonia Dense without copying (the Dense's backing
// slice is t's storage). t must be contiguous; 0-d tensors become
// gorgonia scalars of shape (). float16/bfloat16 have no gorgonia type.
func ToDense(t *ivalue.Tensor) (*tensor.Dense, error) {
	if t == nil {
		return nil, fmt.Errorf("dense: nil Tensor")
	}
	if !t.IsContiguous() {
		return nil, fmt.Errorf("dense: ToDense of a non-contiguous tensor %v; call Contiguous first", t.Sizes())
	}
	shape := tensor.Shape(append([]int(nil), t.Sizes()...))
	if t.Dim() == 0 {
		shape = tensor.ScalarShape()
	}
	var backing any
	switch t.DType() {
	case ivalue.Float32:
		backing = t.F32Contig()
	case ivalue.Float64:
		backing = t.F64Contig()
	case ivalue.Int64:
		backing = t.I64Contig()
	case ivalue.Int32:
		backing = t.I32Contig()
	case ivalue.Int8:
		backing = t.I8Contig()
	case ivalue.Uint8:
		backing = t.U8Contig()
	case ivalue.Bool:
		backing = t.BContig()
	default:
		return nil, fmt.Errorf("dense: %s has no gorgonia dtype", t.DType())
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing)), nil
}
