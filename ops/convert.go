package ops

import (
	"math"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Conversions: aten::to and its copying forms, type_as, tensor <-> scalar
// (Float/Int/Bool/item/ScalarImplicit, NumToTensor, scalar_tensor),
// detach/clone/contiguous/dropout, and the tensor shape scalars (size,
// dim, numel, len, prim::dtype, prim::device).

// WriteScalar stores number v at storage index idx of t, converted to t's
// dtype as PyTorch's fill does (float to int truncates).
func WriteScalar(t *ivalue.Tensor, idx int, v ivalue.IValue) error {
	if !v.IsNumber() {
		return Errorf("expected a number, got %s", v.Kind())
	}
	isF := v.Kind() == ivalue.KindDouble
	switch t.DType() {
	case ivalue.Float32:
		t.F32()[idx] = float32(v.AsFloat())
	case ivalue.Float64:
		t.F64()[idx] = v.AsFloat()
	case ivalue.Float16:
		t.U16()[idx] = ivalue.Float32ToHalf(float32(v.AsFloat()))
	case ivalue.BFloat16:
		t.U16()[idx] = ivalue.Float32ToBFloat16(float32(v.AsFloat()))
	case ivalue.Bool:
		if isF {
			t.B()[idx] = v.Double() != 0
		} else {
			t.B()[idx] = v.Int() != 0
		}
	default:
		var n int64
		if isF {
			f := v.Double()
			if f != f || math.IsInf(f, 0) {
				return Errorf("cannot convert %v to an integer tensor element", f)
			}
			n = int64(f)
		} else {
			n = v.Int()
		}
		switch t.DType() {
		case ivalue.Int64:
			t.I64()[idx] = n
		case ivalue.Int32:
			t.I32()[idx] = int32(n)
		case ivalue.Int16:
			t.I16()[idx] = int16(n)
		case ivalue.Int8:
			t.I8()[idx] = int8(n)
		case ivalue.Uint8:
			t.U8()[idx] = uint8(n)
		default:
			return Errorf("cannot write a scalar into a %s tensor", t.DType())
		}
	}
	return nil
}

// ReadScalar returns the element at storage index idx of t as an IValue:
// float for floating dtypes, int for integers, bool for bool (as item()).
func ReadScalar(t *ivalue.Tensor, idx int) ivalue.IValue {
	switch t.DType() {
	case ivalue.Float32:
		return ivalue.FromDouble(float64(t.F32()[idx]))
	case ivalue.Float64:
		return ivalue.FromDouble(t.F64()[idx])
	case ivalue.Float16:
		return ivalue.FromDouble(float64(ivalue.HalfToFloat32(t.U16()[idx])))
	case ivalue.BFloat16:
		return ivalue.FromDouble(float64(ivalue.BFloat16ToFloat32(t.U16()[idx])))
	case ivalue.Int64:
		return ivalue.FromInt(t.I64()[idx])
	case ivalue.Int32:
		return ivalue.FromInt(int64(t.I32()[idx]))
	case ivalue.Int16:
		return ivalue.FromInt(int64(t.I16()[idx]))
	case ivalue.Int8:
		return ivalue.FromInt(int64(t.I8()[idx]))
	case ivalue.Uint8:
		return ivalue.FromInt(int64(t.U8()[idx]))
	case ivalue.Bool:
		return ivalue.FromBool(t.B()[idx])
	}
	return ivalue.None()
}

// toArgs locates the arguments of one aten::to overload.
type toArgs struct {
	schema  string
	dtype   int // input index of the dtype (ScalarType or int?), -1 none
	other   int // input index of the tensor giving the dtype, -1 none
	device  int // -1 none
	layout  int
	copyArg int
	mf      int // memory_format, -1 none
}

var toOverloads = []toArgs{
	{"aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", 1, -1, -1, -1, 3, 4},
	{"aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", 2, -1, 1, -1, 4, 5},
	{"aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", -1, 1, -1, -1, 3, 4},
	{"aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", 1, -1, 3, 2, 6, 7},
	{"aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", 2, -1, 1, -1, 4, -1},
	{"aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", 1, -1, -1, -1, 3, -1},
	{"aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", -1, -1, -1, -1, 2, -1},
}

// toSchemaFor renames an aten::to schema for another op with the same
// arguments (static_runtime::to_copy, to_maybe_copy_out).
func toSchemaFor(op string, a toArgs, rets string) string {
	s := a.schema
	open := 0
	for open < len(s) && s[open] != '(' {
		open++
	}
	head := s[:open]
	dot := len("aten::to")
	body := s[open:]
	for i := len(body) - 1; i >= 0; i-- {
		if body[i] == '>' && i > 0 && body[i-1] == '-' {
			body = body[:i+1] + " " + rets
			break
		}
	}
	body = strings.ReplaceAll(body, "Tensor(a) self", "Tensor self")
	return op + head[dot:] + body
}

// toKernel converts self to the requested dtype. mode: 0 aten::to (alias
// self when nothing changes and copy=False), 1 always copy (to_copy,
// _to_copy), 2 to_maybe_copy_out (second output says whether it copied).
type toKernel struct {
	toArgs
	mode int
}

// target resolves the destination dtype and the copy flag.
func (k *toKernel) target(p *ProcessedNode, self *ivalue.Tensor) (ivalue.DType, bool, error) {
	dt := self.DType()
	if k.dtype >= 0 && !p.IsNone(k.dtype) {
		d, err := ivalue.DTypeFromScalarType(p.Int(k.dtype))
		if err != nil {
			return 0, false, Errorf("to: %v", err)
		}
		dt = d
	}
	if k.other >= 0 {
		o := p.Tensor(k.other)
		if o == nil {
			return 0, false, Errorf("to: expected a tensor as other")
		}
		dt = o.DType()
	}
	if k.device >= 0 && !p.IsNone(k.device) {
		if d := p.Input(k.device).Str(); d != "cpu" && d != "" {
			return 0, false, Errorf("to: only the cpu device is supported, got %q", d)
		}
	}
	if k.layout >= 0 && !p.IsNone(k.layout) && p.Int(k.layout) != 0 {
		return 0, false, Errorf("to: only the strided layout is supported")
	}
	if k.mf >= 0 && !p.IsNone(k.mf) {
		// contiguous_format (0) and preserve_format (1) give our
		// contiguous outputs; channels_last is not supported.
		if mf := p.Int(k.mf); mf != 0 && mf != 1 {
			return 0, false, Errorf("to: memory_format %d is not supported", mf)
		}
	}
	cp := false
	if k.copyArg >= 0 {
		cp = p.Bool(k.copyArg)
	}
	return dt, cp, nil
}

func (k *toKernel) run(p *ProcessedNode) error {
	self := p.Tensor(0)
	if self == nil {
		return Errorf("to: expected a tensor, got %s", p.Input(0).Kind())
	}
	dt, cp, err := k.target(p, self)
	if err != nil {
		return err
	}
	if k.mode != 1 && !cp && dt == self.DType() {
		p.SetOutput(0, *p.Input(0))
		if k.mode == 2 {
			p.SetOutput(1, ivalue.FromBool(false))
		}
		return nil
	}
	out := p.OutTensor(0)
	out.Resize(dt, self.Sizes())
	if err := CastInto(out, self); err != nil {
		return err
	}
	if k.mode == 2 {
		p.SetOutput(1, ivalue.FromBool(true))
	}
	return nil
}

func registerTo() {
	RegisterNative("aten::to", func(n *graph.Node) Kernel {
		for _, a := range toOverloads {
			if n.Matches(a.schema) {
				return (&toKernel{toArgs: a}).run
			}
		}
		return nil
	})
	RegisterOut("static_runtime::to_copy", func(n *graph.Node) Kernel {
		for _, a := range toOverloads {
			if n.Matches(toSchemaFor("static_runtime::to_copy", a, "Tensor")) {
				return (&toKernel{toArgs: a, mode: 1}).run
			}
		}
		return nil
	})
	RegisterNative("static_runtime::to_maybe_copy_out", func(n *graph.Node) Kernel {
		for _, a := range toOverloads {
			if n.Matches(toSchemaFor("static_runtime::to_maybe_copy_out", a, "(Tensor, bool)")) {
				return (&toKernel{toArgs: a, mode: 2}).run
			}
		}
		return nil
	})
	RegisterOut("aten::_to_copy", func(n *graph.Node) Kernel {
		if n.Matches("aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor") {
			return (&toKernel{toArgs: toArgs{dtype: 1, other: -1, layout: 2, device: 3, copyArg: -1, mf: 6}, mode: 1}).run
		}
		return nil
	})
	RegisterNative("aten::type_as", func(n *graph.Node) Kernel {
		if n.Matches("aten::type_as(Tensor self, Tensor other) -> Tensor") {
			return (&toKernel{toArgs: toArgs{dtype: -1, other: 1, device: -1, layout: -1, copyArg: -1, mf: -1}}).run
		}
		return nil
	})
}

// oneElement returns the storage index of the single element of input i.
func oneElement(p *ProcessedNode, i int, what string) (*ivalue.Tensor, int, error) {
	t := p.Tensor(i)
	if t == nil {
		return nil, 0, Errorf("%s: expected a tensor, got %s", what, p.Input(i).Kind())
	}
	if t.Numel() != 1 {
		return nil, 0, Errorf("%s: a Tensor with %d elements cannot be converted to Scalar", what, t.Numel())
	}
	idx := t.Offset()
	return t, idx, nil
}

func tensorToScalarKernel(what string, conv func(ivalue.IValue) ivalue.IValue, zeroDim bool) Kernel {
	return func(p *ProcessedNode) error {
		t, idx, err := oneElement(p, 0, what)
		if err != nil {
			return err
		}
		if zeroDim && t.Dim() != 0 {
			return Errorf("%s: cannot input a tensor of dimension other than 0 as a scalar argument", what)
		}
		v := ReadScalar(t, idx)
		if conv != nil {
			v = conv(v)
		}
		p.SetOutput(0, v)
		return nil
	}
}

func toIntIV(v ivalue.IValue) ivalue.IValue {
	if v.Kind() == ivalue.KindBool {
		return ivalue.FromInt(v.Int())
	}
	return ivalue.FromInt(v.AsInt())
}
func toFloatIV(v ivalue.IValue) ivalue.IValue { return ivalue.FromDouble(v.AsFloat()) }
func toBoolIV(v ivalue.IValue) ivalue.IValue {
	if v.Kind() == ivalue.KindDouble {
		return ivalue.FromBool(v.Double() != 0)
	}
	return ivalue.FromBool(v.Int() != 0)
}

// numToTensor writes number v into out as a 0-d tensor of dtype dt.
func numToTensor(out *ivalue.Tensor, v ivalue.IValue, dt ivalue.DType) error {
	out.Resize(dt, nil)
	return WriteScalar(out, 0, v)
}

// numberDType is the dtype of a tensor made from a Python number by
// NumToTensor (scalar_to_tensor): float64, int64 or bool.
func numberDType(v ivalue.IValue) ivalue.DType {
	switch v.Kind() {
	case ivalue.KindDouble:
		return ivalue.Float64
	case ivalue.KindBool:
		return ivalue.Bool
	}
	return ivalue.Int64
}

func ewIdentity(p *ProcessedNode) error {
	p.SetOutput(0, *p.Input(0))
	return nil
}

func ewClone(p *ProcessedNode) error {
	t := p.Tensor(0)
	if t == nil {
		return Errorf("clone: expected a tensor, got %s", p.Input(0).Kind())
	}
	if p.NumInputs() > 1 && !p.IsNone(1) {
		if mf := p.Int(1); mf != 0 && mf != 1 {
			return Errorf("clone: memory_format %d is not supported", mf)
		}
	}
	out := p.OutTensor(0)
	out.Resize(t.DType(), t.Sizes())
	ivalue.CopyInto(out, t)
	return nil
}

func init() {
	registerTo()
	RegisterNative("aten::Float", func(n *graph.Node) Kernel {
		if n.Matches("aten::Float.Tensor(Tensor a) -> float") {
			return tensorToScalarKernel("Float", toFloatIV, false)
		}
		return nil
	})
	RegisterNative("aten::Int", func(n *graph.Node) Kernel {
		if n.Matches("aten::Int.Tensor(Tensor a) -> int") {
			return tensorToScalarKernel("Int", toIntIV, false)
		}
		return nil
	})
	RegisterNative("aten::Bool", func(n *graph.Node) Kernel {
		if n.Matches("aten::Bool.Tensor(Tensor a) -> bool") {
			return tensorToScalarKernel("Bool", toBoolIV, false)
		}
		return nil
	})
	RegisterNative("aten::item", func(n *graph.Node) Kernel {
		if n.Matches("aten::item(Tensor self) -> Scalar") {
			return tensorToScalarKernel("item", nil, false)
		}
		return nil
	})
	RegisterNative("aten::ScalarImplicit", func(n *graph.Node) Kernel {
		if n.Matches("aten::ScalarImplicit(Tensor a) -> Scalar") {
			return tensorToScalarKernel("ScalarImplicit", nil, true)
		}
		return nil
	})
	RegisterOut("prim::NumToTensor", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 || len(n.Outputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			v := *p.Input(0)
			if !v.IsNumber() {
				return Errorf("NumToTensor: expected a number, got %s", v.Kind())
			}
			return numToTensor(p.OutTensor(0), v, numberDType(v))
		}
	})
	RegisterOut("aten::scalar_tensor", func(n *graph.Node) Kernel {
		if !n.Matches("aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") {
			return nil
		}
		return func(p *ProcessedNode) error {
			dt := ivalue.Float32 // the default dtype
			if !p.IsNone(1) {
				d, err := ivalue.DTypeFromScalarType(p.Int(1))
				if err != nil {
					return Errorf("scalar_tensor: %v", err)
				}
				dt = d
			}
			return numToTensor(p.OutTensor(0), *p.Input(0), dt)
		}
	})
	RegisterNative("aten::detach", func(n *graph.Node) Kernel {
		if n.Matches("aten::detach(Tensor(a) self) -> Tensor(a)") {
			return ewIdentity
		}
		return nil
	}, MetadataOnly)
	RegisterOut("aten::clone", func(n *graph.Node) Kernel {
		if n.Matches("aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor") {
			return ewClone
		}
		return nil
	})
	// contiguous is native: it returns self when already contiguous (as
	// PyTorch does, so the output aliases the input) and a copy otherwise.
	RegisterNative("aten::contiguous", func(n *graph.Node) Kernel {
		if !n.Matches("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)") {
			return nil
		}
		return func(p *ProcessedNode) error {
			t := p.Tensor(0)
			if t == nil {
				return Errorf("contiguous: expected a tensor, got %s", p.Input(0).Kind())
			}
			if mf := p.Int(1); mf != 0 && mf != 1 {
				return Errorf("contiguous: memory_format %d is not supported", mf)
			}
			if t.IsContiguous() {
				p.SetOutput(0, *p.Input(0))
				return nil
			}
			out := p.OutTensor(0)
			out.Resize(t.DType(), t.Sizes())
			if t.Device().IsHost() {
				copyStrided(out, t) // dims coalesced, transposes in blocks
			} else {
				ivalue.CopyInto(out, t)
			}
			return nil
		}
	})
	// dropout in inference (train=False) is the identity.
	for _, name := range []string{"dropout", "feature_dropout", "alpha_dropout"} {
		schema := "aten::" + name + "(Tensor input, float p, bool train) -> Tensor"
		RegisterNative("aten::"+name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				if p.Bool(2) {
					return Errorf("dropout with train=True is not supported (inference only)")
				}
				p.SetOutput(0, *p.Input(0))
				return nil
			}
		}, MetadataOnly)
	}
	registerShapeScalars()
}

func registerShapeScalars() {
	tensorIn := func(p *ProcessedNode, what string) (*ivalue.Tensor, error) {
		t := p.Tensor(0)
		if t == nil {
			return nil, Errorf("%s: expected a tensor, got %s", what, p.Input(0).Kind())
		}
		return t, nil
	}
	RegisterNative("aten::size", func(n *graph.Node) Kernel {
		switch {
		case n.Matches("aten::size(Tensor self) -> int[]"):
			return func(p *ProcessedNode) error {
				t, err := tensorIn(p, "size")
				if err != nil {
					return err
				}
				l := p.OutList(0, t.Dim(), false)
				for i, s := range t.Sizes() {
					l.Items[i] = ivalue.FromInt(int64(s))
				}
				return nil
			}
		case n.Matches("aten::size.int(Tensor self, int dim) -> int"):
			return func(p *ProcessedNode) error {
				t, err := tensorIn(p, "size")
				if err != nil {
					return err
				}
				if t.Dim() == 0 {
					return Errorf("dimension specified as %d but tensor has no dimensions", p.Int(1))
				}
				d, err := ewWrapDim(p.Int(1), t.Dim())
				if err != nil {
					return err
				}
				p.SetOutput(0, ivalue.FromInt(int64(t.Sizes()[d])))
				return nil
			}
		}
		return nil
	}, MetadataOnly)
	simple := func(op, schema string, f func(t *ivalue.Tensor) (ivalue.IValue, error)) {
		RegisterNative(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				t, err := tensorIn(p, op)
				if err != nil {
					return err
				}
				v, err := f(t)
				if err != nil {
					return err
				}
				p.SetOutput(0, v)
				return nil
			}
		}, MetadataOnly)
	}
	simple("aten::dim", "aten::dim(Tensor self) -> int", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		return ivalue.FromInt(int64(t.Dim())), nil
	})
	simple("aten::numel", "aten::numel(Tensor self) -> int", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		return ivalue.FromInt(int64(t.Numel())), nil
	})
	simple("aten::len", "aten::len.Tensor(Tensor t) -> int", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		if t.Dim() == 0 {
			return ivalue.None(), Errorf("len() of a 0-d tensor")
		}
		return ivalue.FromInt(int64(t.Sizes()[0])), nil
	})
	simple("prim::dtype", "prim::dtype(Tensor a) -> int", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		return ivalue.FromInt(t.DType().ScalarType()), nil
	})
	// On a device these run on the module's tensors (they are
	// MetadataOnly and not in ATen's dispatcher): a model that moves
	// tensors to x.device must see the GPU there. libtorch's CPU memory is
	// "cpu" to a model, as it is to PyTorch.
	simple("prim::device", "prim::device(Tensor a) -> Device", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		if d := t.Device(); d.Type == ivalue.CUDA {
			return ivalue.FromDevice(d.String()), nil
		}
		return ivalue.FromDevice("cpu"), nil
	})
	simple("prim::is_cuda", "prim::is_cuda(Tensor a) -> bool", func(t *ivalue.Tensor) (ivalue.IValue, error) {
		return ivalue.FromBool(t.Device().Type == ivalue.CUDA), nil
	})
}

// ewWrapDim maps a possibly negative dim into [0, ndim); a 0-d tensor
// accepts 0 and -1, as PyTorch.
func ewWrapDim(d int64, ndim int) (int, error) {
	n := int64(ndim)
	if n == 0 {
		n = 1
	}
	if d < -n || d >= n {
		return 0, Errorf("dimension out of range (expected to be in range of [%d, %d], but got %d)", -n, n-1, d)
	}
	if d < 0 {
		d += n
	}
	return int(d), nil
}
