package serve

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/serve/configpb"
)

// The protocol's datatype names of the element types gosr runs.
var datatypes = []struct {
	name string
	dt   ivalue.DType
	cfg  configpb.DataType
}{
	{"BOOL", ivalue.Bool, configpb.DataType_TYPE_BOOL},
	{"UINT8", ivalue.Uint8, configpb.DataType_TYPE_UINT8},
	{"INT8", ivalue.Int8, configpb.DataType_TYPE_INT8},
	{"INT16", ivalue.Int16, configpb.DataType_TYPE_INT16},
	{"INT32", ivalue.Int32, configpb.DataType_TYPE_INT32},
	{"INT64", ivalue.Int64, configpb.DataType_TYPE_INT64},
	{"FP16", ivalue.Float16, configpb.DataType_TYPE_FP16},
	{"BF16", ivalue.BFloat16, configpb.DataType_TYPE_BF16},
	{"FP32", ivalue.Float32, configpb.DataType_TYPE_FP32},
	{"FP64", ivalue.Float64, configpb.DataType_TYPE_FP64},
}

// DTypeOf is the element type of a protocol datatype name ("FP32").
func DTypeOf(datatype string) (ivalue.DType, error) {
	for _, d := range datatypes {
		if d.name == datatype {
			return d.dt, nil
		}
	}
	return ivalue.Undefined, fmt.Errorf("datatype %q is not one gosr runs (%s)", datatype, datatypeList())
}

// Datatype is the protocol's name of dt ("" for none).
func Datatype(dt ivalue.DType) string {
	for _, d := range datatypes {
		if d.dt == dt {
			return d.name
		}
	}
	return ""
}

func dtypeOfConfig(c configpb.DataType) (ivalue.DType, error) {
	for _, d := range datatypes {
		if d.cfg == c {
			return d.dt, nil
		}
	}
	return ivalue.Undefined, fmt.Errorf("data_type %s is not one gosr runs", c)
}

func datatypeList() string {
	s := ""
	for i, d := range datatypes {
		if i > 0 {
			s += ", "
		}
		s += d.name
	}
	return s
}

// numel is the element count of shape, or an error for a negative
// dimension or a count past limit elements.
func numel(shape []int64, limit int64) (int, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d != 0 && n > limit/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, limit)
		}
		n *= d
	}
	if n > limit {
		return 0, fmt.Errorf("shape %v has more than %d elements", shape, limit)
	}
	return int(n), nil
}

func intShape(shape []int64) []int {
	s := make([]int, len(shape))
	for i, d := range shape {
		s[i] = int(d)
	}
	return s
}

func int64Shape(shape []int) []int64 {
	s := make([]int64, len(shape))
	for i, d := range shape {
		s[i] = int64(d)
	}
	return s
}

// newTensor allocates a zeroed tensor of datatype dt and shape, whose
// bytes are at most maxBytes.
func newTensor(dt ivalue.DType, shape []int64, maxBytes int64) (*ivalue.Tensor, error) {
	n, err := numel(shape, math.MaxInt64/8)
	if err != nil {
		return nil, err
	}
	if int64(n)*int64(dt.Size()) > maxBytes {
		return nil, &Error{Code: CodeTooLarge, Msg: fmt.Sprintf("a %s tensor of shape %v is over the %d-byte limit", Datatype(dt), shape, maxBytes)}
	}
	return ivalue.NewTensorErr(dt, intShape(shape)...)
}

// rawBytes is the bytes of a contiguous tensor t, row-major and
// little-endian (as the protocol's raw contents are on every machine gosr
// runs on).
func rawBytes(t *ivalue.Tensor) []byte {
	n := t.Nbytes()
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(t.DataPtr()), n)
}

// tensorFromRaw makes a tensor of datatype and shape from raw, which
// must hold exactly its bytes.
func tensorFromRaw(name string, dt ivalue.DType, shape []int64, raw []byte, maxBytes int64) (*ivalue.Tensor, error) {
	t, err := newTensor(dt, shape, maxBytes)
	if err != nil {
		return nil, errorf(CodeInvalidArgument, "input %q: %w", name, err)
	}
	if len(raw) != t.Nbytes() {
		return nil, errorf(CodeInvalidArgument, "input %q: %d bytes of raw contents for a %s tensor of shape %v (%d bytes)",
			name, len(raw), Datatype(dt), shape, t.Nbytes())
	}
	copy(rawBytes(t), raw)
	if dt == ivalue.Bool {
		for i, b := range raw {
			if b > 1 {
				return nil, errorf(CodeInvalidArgument, "input %q: byte %d of a BOOL tensor is %d, not 0 or 1", name, i, b)
			}
		}
	}
	return t, nil
}

// contiguous returns t, or a contiguous copy of it.
func contiguous(t *ivalue.Tensor) (*ivalue.Tensor, error) {
	if t.IsContiguous() {
		return t, nil
	}
	return t.CloneErr()
}
