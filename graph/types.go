package graph

import (
	"fmt"
	"strings"

	"github.com/gosr/gosr/ivalue"
)

// TypeKind classifies a Type.
type TypeKind uint8

const (
	TensorType TypeKind = iota
	IntType
	FloatType
	BoolType
	StringType
	NoneType
	DeviceType
	NumberType // Scalar: int or float
	ListType
	TupleType
	OptionalType
	DictType
	ClassType // a module or other class object (__torch__.M)
	AnyType
	LayoutType
	MemoryFormatType
	ScalarTypeType // a dtype argument (prints as int in graphs)
	GeneratorType
	FutureType
)

// Type is a value's static type, as TorchScript's c10::Type.
type Type struct {
	Kind TypeKind
	// Elems: List [elem], Optional [elem], Future [elem], Tuple elems, Dict [key, value].
	Elems []*Type
	// Tensor refinements, where known (zero values mean unknown).
	DType        ivalue.DType
	Sizes        []int // nil: rank unknown; -1 entries (printed *) unknown
	Strides      []int
	RequiresGrad *bool
	Device       string
	// Name of a class type (__torch__.M).
	Name string
}

// Singletons for the unrefined types. Treat them as read-only.
var (
	Tensor    = &Type{Kind: TensorType}
	Int       = &Type{Kind: IntType}
	Float     = &Type{Kind: FloatType}
	Bool      = &Type{Kind: BoolType}
	Str       = &Type{Kind: StringType}
	None      = &Type{Kind: NoneType}
	Device    = &Type{Kind: DeviceType}
	Number    = &Type{Kind: NumberType}
	Any       = &Type{Kind: AnyType}
	Layout    = &Type{Kind: LayoutType}
	MemFormat = &Type{Kind: MemoryFormatType}
	ScalarTyp = &Type{Kind: ScalarTypeType}
	Generator = &Type{Kind: GeneratorType}
)

// ListOf returns List[elem].
func ListOf(elem *Type) *Type { return &Type{Kind: ListType, Elems: []*Type{elem}} }

// OptionalOf returns Optional[elem].
func OptionalOf(elem *Type) *Type { return &Type{Kind: OptionalType, Elems: []*Type{elem}} }

// TupleOf returns Tuple[elems...].
func TupleOf(elems ...*Type) *Type { return &Type{Kind: TupleType, Elems: elems} }

// DictOf returns Dict[key, value].
func DictOf(key, value *Type) *Type { return &Type{Kind: DictType, Elems: []*Type{key, value}} }

// FutureOf returns Future[elem].
func FutureOf(elem *Type) *Type { return &Type{Kind: FutureType, Elems: []*Type{elem}} }

// ClassOf returns a class type by qualified name.
func ClassOf(name string) *Type { return &Type{Kind: ClassType, Name: name} }

// Elem returns the element type of a List, Optional or Future.
func (t *Type) Elem() *Type {
	if len(t.Elems) == 0 {
		return Any
	}
	return t.Elems[0]
}

// String prints the type as PyTorch 1.13's graph printer does
// (Tensor, int, int[], (Tensor, int), Tensor?, Dict(str, Tensor),
// Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)).
func (t *Type) String() string {
	switch t.Kind {
	case TensorType:
		if t.DType == ivalue.Undefined && t.Sizes == nil && t.RequiresGrad == nil && t.Device == "" {
			return "Tensor"
		}
		var b strings.Builder
		if t.DType != ivalue.Undefined {
			b.WriteString(t.DType.TorchName())
		} else {
			b.WriteString("Tensor")
		}
		var parts []string
		if t.Sizes != nil {
			for _, s := range t.Sizes {
				if s < 0 {
					parts = append(parts, "*")
				} else {
					parts = append(parts, fmt.Sprint(s))
				}
			}
		}
		if t.Strides != nil {
			ss := make([]string, len(t.Strides))
			for i, s := range t.Strides {
				if s < 0 {
					ss[i] = "*"
				} else {
					ss[i] = fmt.Sprint(s)
				}
			}
			parts = append(parts, "strides=["+strings.Join(ss, ", ")+"]")
		}
		if t.RequiresGrad != nil {
			rg := "0"
			if *t.RequiresGrad {
				rg = "1"
			}
			parts = append(parts, "requires_grad="+rg)
		}
		if t.Device != "" {
			parts = append(parts, "device="+t.Device)
		}
		b.WriteString("(" + strings.Join(parts, ", ") + ")")
		return b.String()
	case IntType:
		return "int"
	case FloatType:
		return "float"
	case BoolType:
		return "bool"
	case StringType:
		return "str"
	case NoneType:
		return "NoneType"
	case DeviceType:
		return "Device"
	case NumberType:
		return "Scalar"
	case AnyType:
		return "Any"
	case LayoutType:
		return "Layout"
	case MemoryFormatType:
		return "MemoryFormat"
	case ScalarTypeType:
		return "ScalarType"
	case GeneratorType:
		return "Generator"
	case ListType:
		return t.Elem().String() + "[]"
	case OptionalType:
		return t.Elem().String() + "?"
	case TupleType:
		parts := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			parts[i] = e.String()
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case DictType:
		return "Dict(" + t.Elems[0].String() + ", " + t.Elems[1].String() + ")"
	case FutureType:
		return "Future(" + t.Elem().String() + ")"
	case ClassType:
		return t.Name
	}
	return fmt.Sprintf("Type(%d)", t.Kind)
}

// IsSubtypeOf reports whether a value of type t may be passed where o is
// expected (Tensor refinements ignored; int and float are Scalars; None
// and T are T?; everything is Any).
func (t *Type) IsSubtypeOf(o *Type) bool {
	if o.Kind == AnyType {
		return true
	}
	switch o.Kind {
	case OptionalType:
		return t.Kind == NoneType || t.IsSubtypeOf(o.Elem()) ||
			(t.Kind == OptionalType && t.Elem().IsSubtypeOf(o.Elem()))
	case NumberType:
		return t.Kind == IntType || t.Kind == FloatType || t.Kind == NumberType || t.Kind == BoolType
	case ScalarTypeType, LayoutType, MemoryFormatType:
		return t.Kind == IntType || t.Kind == o.Kind
	}
	if t.Kind != o.Kind {
		return false
	}
	switch t.Kind {
	case ListType, FutureType:
		return t.Elem().IsSubtypeOf(o.Elem())
	case TupleType:
		if len(o.Elems) == 0 { // unrefined tuple
			return true
		}
		if len(t.Elems) != len(o.Elems) {
			return false
		}
		for i := range t.Elems {
			if !t.Elems[i].IsSubtypeOf(o.Elems[i]) {
				return false
			}
		}
		return true
	case DictType:
		return t.Elems[0].IsSubtypeOf(o.Elems[0]) && t.Elems[1].IsSubtypeOf(o.Elems[1])
	case ClassType:
		return o.Name == "" || t.Name == o.Name
	}
	return true
}

// Equal reports structural equality (including tensor refinements).
func (t *Type) Equal(o *Type) bool { return t.String() == o.String() }
