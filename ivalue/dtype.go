// Package ivalue holds gosr's runtime values: tensors over flat byte
// storage, and IValue, the tagged union every slot of a runtime holds.
package ivalue

import "fmt"

// DType is an element type of a tensor.
type DType uint8

const (
	Undefined DType = iota
	Float32
	Float64
	Float16
	BFloat16
	Int64
	Int32
	Int16
	Int8
	Uint8
	Bool
)

var dtypeInfo = [...]struct {
	size  int
	torch string // the name PyTorch's IR uses (Float, Long, ...)
	short string // the name torch.dtype uses (float32, int64, ...)
	st    int    // c10::ScalarType number
}{
	Undefined: {0, "Undefined", "undefined", -1},
	Float32:   {4, "Float", "float32", 6},
	Float64:   {8, "Double", "float64", 7},
	Float16:   {2, "Half", "float16", 5},
	BFloat16:  {2, "BFloat16", "bfloat16", 15},
	Int64:     {8, "Long", "int64", 4},
	Int32:     {4, "Int", "int32", 3},
	Int16:     {2, "Short", "int16", 2},
	Int8:      {1, "Char", "int8", 1},
	Uint8:     {1, "Byte", "uint8", 0},
	Bool:      {1, "Bool", "bool", 11},
}

// Size is the element size in bytes.
func (d DType) Size() int {
	if int(d) >= len(dtypeInfo) {
		return 0
	}
	return dtypeInfo[d].size
}

// String returns the torch.dtype name (float32, int64, ...).
func (d DType) String() string {
	if int(d) >= len(dtypeInfo) {
		return fmt.Sprintf("dtype(%d)", d)
	}
	return dtypeInfo[d].short
}

// TorchName returns the name PyTorch's IR prints in tensor types (Float, Long, ...).
func (d DType) TorchName() string {
	if int(d) >= len(dtypeInfo) {
		return fmt.Sprintf("dtype(%d)", d)
	}
	return dtypeInfo[d].torch
}

// ScalarType returns c10::ScalarType's number for d, the int that
// aten::to and friends take as a dtype argument.
func (d DType) ScalarType() int64 {
	if int(d) >= len(dtypeInfo) {
		return -1
	}
	return int64(dtypeInfo[d].st)
}

// IsFloat reports whether d is a floating point type.
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

// IsInt reports whether d is an integral type (bool excluded).
func (d DType) IsInt() bool {
	return d == Int64 || d == Int32 || d == Int16 || d == Int8 || d == Uint8
}

// DTypeFromScalarType maps a c10::ScalarType number to a DType.
func DTypeFromScalarType(st int64) (DType, error) {
	for d := range dtypeInfo {
		if int64(dtypeInfo[d].st) == st && DType(d) != Undefined {
			return DType(d), nil
		}
	}
	return Undefined, fmt.Errorf("unsupported ScalarType %d", st)
}

// DTypeFromTorchName maps an IR name (Float, Long, ...) or a torch.dtype
// name (float32, int64, ...) to a DType.
func DTypeFromTorchName(s string) (DType, error) {
	for d := range dtypeInfo {
		if DType(d) != Undefined && (dtypeInfo[d].torch == s || dtypeInfo[d].short == s) {
			return DType(d), nil
		}
	}
	return Undefined, fmt.Errorf("unknown dtype %q", s)
}
