package ops

import (
	"math"
	"strconv"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Scalar ops on int/float/bool/str IValues (native): arithmetic,
// comparisons, conversions, str/format, min/max, math functions. Overloads
// (add.int, add.float, add.int_float, add(Scalar, Scalar), ...) share one
// kernel that dispatches on the runtime kinds: int op int gives int
// (except true division and pow.int), anything with a float gives float.

// isScalarType reports whether t is int, float, bool, Scalar or str (or
// an Optional of those).
func isScalarType(t *graph.Type) bool {
	switch t.Kind {
	case graph.IntType, graph.FloatType, graph.BoolType, graph.NumberType, graph.StringType:
		return true
	}
	return false
}

func allScalarInputs(n *graph.Node, count int) bool {
	if len(n.Inputs) != count {
		return false
	}
	for _, in := range n.Inputs {
		if !isScalarType(in.Type) {
			return false
		}
	}
	return true
}

func numArg(p *ProcessedNode, i int) (ivalue.IValue, error) {
	v := *p.Input(i)
	if !v.IsNumber() {
		return v, Errorf("expected a number as input %d, got %s", i, v.Kind())
	}
	if v.Kind() == ivalue.KindBool {
		v = ivalue.FromInt(v.Int())
	}
	return v, nil
}

type scalarBinFn func(a, b ivalue.IValue, intOut bool) (ivalue.IValue, error)

func pyFloorDivInt(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errIntDivZero
	}
	return floorDivI(a, b), nil
}

func scalarArith(op binOp) scalarBinFn {
	return func(a, b ivalue.IValue, intOut bool) (ivalue.IValue, error) {
		if a.Kind() == ivalue.KindInt && b.Kind() == ivalue.KindInt && op != opDiv && (op != opPow || intOut) {
			x, y := a.Int(), b.Int()
			switch op {
			case opAdd:
				return ivalue.FromInt(x + y), nil
			case opSub:
				return ivalue.FromInt(x - y), nil
			case opMul:
				return ivalue.FromInt(x * y), nil
			case opFloorDiv:
				q, err := pyFloorDivInt(x, y)
				return ivalue.FromInt(q), err
			case opRem:
				if y == 0 {
					return ivalue.None(), errIntDivZero
				}
				return ivalue.FromInt(remI(x, y)), nil
			case opPow:
				if y < 0 {
					return ivalue.None(), Errorf("integers to negative integer powers are not allowed")
				}
				return ivalue.FromInt(powI(x, y)), nil
			case opMax:
				return ivalue.FromInt(max(x, y)), nil
			case opMin:
				return ivalue.FromInt(min(x, y)), nil
			}
		}
		x, y := a.AsFloat(), b.AsFloat()
		var r float64
		switch op {
		case opAdd:
			r = x + y
		case opSub:
			r = x - y
		case opMul:
			r = x * y
		case opDiv:
			r = x / y
		case opFloorDiv:
			r = floorDivF(x, y)
		case opRem:
			r = remF(x, y)
		case opPow:
			if x == 0 && y < 0 {
				return ivalue.None(), Errorf("0.0 cannot be raised to a negative power")
			}
			r = math.Pow(x, y)
		case opMax:
			// TorchScript's a > b ? a : b: a NaN wins only as b
			r = y
			if x > y {
				r = x
			}
		case opMin:
			r = y
			if x < y {
				r = x
			}
		default:
			return ivalue.None(), Errorf("internal: scalar op %d", op)
		}
		return ivalue.FromDouble(r), nil
	}
}

// scalarCompare compares numbers (mixed int/float), bools, strings, None.
func scalarCompare(op binOp, a, b ivalue.IValue) (bool, error) {
	var c int
	switch {
	case a.IsNumber() && b.IsNumber():
		if a.Kind() != ivalue.KindDouble && b.Kind() != ivalue.KindDouble {
			x, y := a.Int(), b.Int()
			c = cmp3(x < y, x > y)
		} else {
			x, y := a.AsFloat(), b.AsFloat()
			if x != x || y != y {
				return op == opNe, nil
			}
			c = cmp3(x < y, x > y)
		}
	case a.Kind() == ivalue.KindString && b.Kind() == ivalue.KindString:
		c = strings.Compare(a.Str(), b.Str())
	default:
		if op == opEq || op == opNe {
			return (op == opEq) == ivalueDeepEqual(a, b), nil
		}
		return false, Errorf("cannot compare %s and %s", a.Kind(), b.Kind())
	}
	switch op {
	case opEq:
		return c == 0, nil
	case opNe:
		return c != 0, nil
	case opLt:
		return c < 0, nil
	case opLe:
		return c <= 0, nil
	case opGt:
		return c > 0, nil
	}
	return c >= 0, nil
}

func cmp3(lt, gt bool) int {
	if lt {
		return -1
	}
	if gt {
		return 1
	}
	return 0
}

// ivalueDeepEqual is == for TorchScript values: lists and tuples by
// elements, others by IValue.Equal.
func ivalueDeepEqual(a, b ivalue.IValue) bool {
	if (a.Kind() == ivalue.KindList || a.Kind() == ivalue.KindTuple) && a.Kind() == b.Kind() {
		x, y := a.List().Items, b.List().Items
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !ivalueDeepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// FormatIValue prints v as TorchScript's str() and format() do: floats
// with 17 significant digits, or "1." when integral; True/False; lists
// and tuples in brackets.
func FormatIValue(v ivalue.IValue) string {
	var b strings.Builder
	formatIValue(&b, v)
	return b.String()
}

func formatIValue(b *strings.Builder, v ivalue.IValue) {
	switch v.Kind() {
	case ivalue.KindString:
		b.WriteString(v.Str())
	case ivalue.KindDouble:
		d := v.Double()
		// IValue's operator<<: a double that survives int64(d) prints
		// as that integer and a dot, whatever its magnitude.
		if d >= -0x1p63 && d < 0x1p63 && d == math.Trunc(d) {
			b.WriteString(strconv.FormatInt(int64(d), 10))
			b.WriteByte('.')
			return
		}
		switch {
		case d != d:
			b.WriteString("nan")
		case math.IsInf(d, 1):
			b.WriteString("inf")
		case math.IsInf(d, -1):
			b.WriteString("-inf")
		default:
			b.WriteString(strconv.FormatFloat(d, 'g', 17, 64))
		}
	case ivalue.KindList, ivalue.KindTuple:
		open, close := "[", "]"
		if v.Kind() == ivalue.KindTuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range v.List().Items {
			if i > 0 {
				b.WriteString(", ")
			}
			// operator<< prints strings in containers unquoted
			formatIValue(b, it)
		}
		if v.Kind() == ivalue.KindTuple && len(v.List().Items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	case ivalue.KindDevice:
		b.WriteString(v.Str())
	default:
		b.WriteString(v.String())
	}
}

// strMemo is a string op's last scalar inputs and its result. Scripted
// models build strings on every run (the reasons nn.MultiheadAttention
// and nn.TransformerEncoder give for not taking their fast path) from
// the same inputs: with the result kept, a steady run allocates nothing.
type strMemo struct {
	in  []ivalue.IValue
	out ivalue.IValue
	ok  bool
}

// memoable inputs compare by value: scalars, strings, and lists and
// tuples of them (kept as copies, since a list may change in place).
func memoable(v ivalue.IValue) bool {
	switch v.Kind() {
	case ivalue.KindNone, ivalue.KindInt, ivalue.KindBool, ivalue.KindDouble, ivalue.KindString, ivalue.KindDevice:
		return true
	case ivalue.KindList, ivalue.KindTuple:
		for _, it := range v.List().Items {
			if !memoable(it) || it.Kind() == ivalue.KindList || it.Kind() == ivalue.KindTuple {
				return false
			}
		}
		return true
	}
	return false
}

// sameValue says whether memoable a and b would format alike.
func sameValue(a, b ivalue.IValue) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case ivalue.KindList, ivalue.KindTuple:
		ai, bi := a.List().Items, b.List().Items
		if len(ai) != len(bi) {
			return false
		}
		for i := range ai {
			if !sameValue(ai[i], bi[i]) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// memoHit sets p's output to the kept result when p's inputs are those
// it was made from.
func memoHit(p *ProcessedNode) bool {
	m, _ := p.State.(*strMemo)
	if m == nil || !m.ok || len(m.in) != p.NumInputs() {
		return false
	}
	for i, a := range m.in {
		if !sameValue(a, *p.Input(i)) {
			return false
		}
	}
	p.SetOutput(0, m.out)
	return true
}

// memoKeep sets p's output to out and keeps it with (copies of) p's
// inputs, when they are all memoable.
func memoKeep(p *ProcessedNode, out ivalue.IValue) {
	p.SetOutput(0, out)
	m, _ := p.State.(*strMemo)
	if m == nil {
		m = &strMemo{}
		p.State = m
	}
	m.ok = false
	m.in = m.in[:0]
	for i := 0; i < p.NumInputs(); i++ {
		v := *p.Input(i)
		if !memoable(v) {
			return
		}
		switch v.Kind() {
		case ivalue.KindList:
			v = ivalue.NewList(append([]ivalue.IValue(nil), v.List().Items...)...)
		case ivalue.KindTuple:
			v = ivalue.NewTuple(append([]ivalue.IValue(nil), v.List().Items...)...)
		}
		m.in = append(m.in, v)
	}
	m.out, m.ok = out, true
}

// formatString is TorchScript's aten::format: each "{}" takes the next
// argument; extra arguments are ignored, missing ones are an error.
func formatString(f string, args []ivalue.IValue) (string, error) {
	var b strings.Builder
	k := 0
	for {
		i := strings.Index(f, "{}")
		if i < 0 {
			b.WriteString(f)
			break
		}
		if k >= len(args) {
			return "", Errorf("format: too few arguments for format string")
		}
		b.WriteString(f[:i])
		formatIValue(&b, args[k])
		k++
		f = f[i+2:]
	}
	return b.String(), nil
}

func registerScalarBin(name string, op binOp) {
	fn := scalarArith(op)
	RegisterNative(name, func(n *graph.Node) Kernel {
		if !allScalarInputs(n, 2) || n.Inputs[0].Type.Kind == graph.StringType {
			return nil
		}
		intOut := len(n.Outputs) == 1 && n.Outputs[0].Type.Kind == graph.IntType
		return func(p *ProcessedNode) error {
			a, err := numArg(p, 0)
			if err != nil {
				return err
			}
			b, err := numArg(p, 1)
			if err != nil {
				return err
			}
			r, err := fn(a, b, intOut)
			if err != nil {
				return err
			}
			p.SetOutput(0, r)
			return nil
		}
	})
}

func registerScalarUnary(name string, f func(v ivalue.IValue) (ivalue.IValue, error)) {
	RegisterNative(name, func(n *graph.Node) Kernel {
		if !allScalarInputs(n, 1) || len(n.Outputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			r, err := f(*p.Input(0))
			if err != nil {
				return err
			}
			p.SetOutput(0, r)
			return nil
		}
	})
}

func floatToIntChecked(f float64, what string) (ivalue.IValue, error) {
	if f != f || math.IsInf(f, 0) || f >= 9.3e18 || f <= -9.3e18 {
		return ivalue.None(), Errorf("%s: cannot convert float %v to integer", what, f)
	}
	return ivalue.FromInt(int64(f)), nil
}

func init() {
	for _, c := range []struct {
		name string
		op   binOp
	}{{"add", opAdd}, {"sub", opSub}, {"mul", opMul}, {"div", opDiv}, {"floordiv", opFloorDiv},
		{"remainder", opRem}, {"pow", opPow}, {"min", opMin}, {"max", opMax}} {
		registerScalarBin("aten::"+c.name, c.op)
	}
	registerScalarBin("prim::min", opMin)
	registerScalarBin("prim::max", opMax)
	// aten::add.str
	RegisterNative("aten::add", func(n *graph.Node) Kernel {
		if !n.Matches("aten::add.str(str a, str b) -> str") {
			return nil
		}
		return func(p *ProcessedNode) error {
			if memoHit(p) {
				return nil
			}
			memoKeep(p, ivalue.FromString(p.Input(0).Str()+p.Input(1).Str()))
			return nil
		}
	})
	for _, c := range []struct {
		name string
		op   binOp
	}{{"eq", opEq}, {"ne", opNe}, {"lt", opLt}, {"le", opLe}, {"gt", opGt}, {"ge", opGe}} {
		op := c.op
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if len(n.Inputs) != 2 || len(n.Outputs) != 1 || n.Outputs[0].Type.Kind != graph.BoolType {
				return nil
			}
			for _, in := range n.Inputs {
				if in.Type.Kind == graph.TensorType {
					return nil
				}
			}
			return func(p *ProcessedNode) error {
				r, err := scalarCompare(op, *p.Input(0), *p.Input(1))
				if err != nil {
					return err
				}
				p.SetOutput(0, ivalue.FromBool(r))
				return nil
			}
		})
	}
	registerScalarUnary("aten::__not__", func(v ivalue.IValue) (ivalue.IValue, error) {
		return ivalue.FromBool(!v.Bool()), nil
	})
	for _, c := range []struct {
		name string
		f    func(a, b int64) int64
	}{{"__and__", func(a, b int64) int64 { return a & b }}, {"__or__", func(a, b int64) int64 { return a | b }},
		{"__xor__", func(a, b int64) int64 { return a ^ b }}} {
		f := c.f
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if !allScalarInputs(n, 2) {
				return nil
			}
			isBool := n.Inputs[0].Type.Kind == graph.BoolType && n.Inputs[1].Type.Kind == graph.BoolType
			return func(p *ProcessedNode) error {
				r := f(p.Input(0).Int(), p.Input(1).Int())
				if isBool {
					p.SetOutput(0, ivalue.FromBool(r != 0))
				} else {
					p.SetOutput(0, ivalue.FromInt(r))
				}
				return nil
			}
		})
	}
	registerScalarUnary("aten::neg", func(v ivalue.IValue) (ivalue.IValue, error) {
		switch v.Kind() {
		case ivalue.KindDouble:
			return ivalue.FromDouble(-v.Double()), nil
		case ivalue.KindInt, ivalue.KindBool:
			return ivalue.FromInt(-v.Int()), nil
		}
		return v, Errorf("neg: expected a number, got %s", v.Kind())
	})
	registerScalarUnary("prim::abs", func(v ivalue.IValue) (ivalue.IValue, error) {
		if v.Kind() == ivalue.KindDouble {
			return ivalue.FromDouble(math.Abs(v.Double())), nil
		}
		return ivalue.FromInt(absI(v.Int())), nil
	})
	registerScalarUnary("aten::Int", func(v ivalue.IValue) (ivalue.IValue, error) {
		switch v.Kind() {
		case ivalue.KindDouble:
			return floatToIntChecked(v.Double(), "Int")
		case ivalue.KindInt, ivalue.KindBool:
			return ivalue.FromInt(v.Int()), nil
		case ivalue.KindString:
			s := strings.TrimSpace(v.Str())
			i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
			if err != nil {
				return v, Errorf("invalid literal for int() with base 10: '%s'", v.Str())
			}
			return ivalue.FromInt(i), nil
		}
		return v, Errorf("Int: unsupported %s", v.Kind())
	})
	registerScalarUnary("aten::Float", func(v ivalue.IValue) (ivalue.IValue, error) {
		switch v.Kind() {
		case ivalue.KindDouble, ivalue.KindInt, ivalue.KindBool:
			return ivalue.FromDouble(v.AsFloat()), nil
		case ivalue.KindString:
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
			if err != nil {
				return v, Errorf("could not convert string to float: '%s'", v.Str())
			}
			return ivalue.FromDouble(f), nil
		}
		return v, Errorf("Float: unsupported %s", v.Kind())
	})
	registerScalarUnary("aten::Bool", func(v ivalue.IValue) (ivalue.IValue, error) {
		switch v.Kind() {
		case ivalue.KindDouble:
			return ivalue.FromBool(v.Double() != 0), nil
		case ivalue.KindInt, ivalue.KindBool:
			return ivalue.FromBool(v.Int() != 0), nil
		}
		return v, Errorf("Bool: unsupported %s", v.Kind())
	})
	mathF := func(f func(float64) float64, toInt bool) func(ivalue.IValue) (ivalue.IValue, error) {
		return func(v ivalue.IValue) (ivalue.IValue, error) {
			if !v.IsNumber() {
				return v, Errorf("expected a number, got %s", v.Kind())
			}
			if toInt {
				if v.Kind() != ivalue.KindDouble {
					return ivalue.FromInt(v.Int()), nil
				}
				return floatToIntChecked(f(v.Double()), "math")
			}
			return ivalue.FromDouble(f(v.AsFloat())), nil
		}
	}
	registerScalarUnary("aten::floor", mathF(math.Floor, true))
	registerScalarUnary("aten::ceil", mathF(math.Ceil, true))
	registerScalarUnary("aten::sqrt", mathF(math.Sqrt, false))
	registerScalarUnary("aten::exp", mathF(math.Exp, false))
	registerScalarUnary("aten::log", mathF(math.Log, false))
	registerScalarUnary("aten::round", mathF(math.RoundToEven, false))
	RegisterNative("aten::str", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			if memoHit(p) {
				return nil
			}
			memoKeep(p, ivalue.FromString(FormatIValue(*p.Input(0))))
			return nil
		}
	})
	RegisterNative("aten::format", func(n *graph.Node) Kernel {
		if len(n.Inputs) < 1 || n.Inputs[0].Type.Kind != graph.StringType {
			return nil
		}
		return func(p *ProcessedNode) error {
			if memoHit(p) {
				return nil
			}
			args := make([]ivalue.IValue, p.NumInputs()-1) // a new string allocates anyway
			for i := range args {
				args[i] = *p.Input(i + 1)
			}
			s, err := formatString(p.Input(0).Str(), args)
			if err != nil {
				return err
			}
			memoKeep(p, ivalue.FromString(s))
			return nil
		}
	})
	for _, c := range []struct {
		name string
		is   bool
	}{{"__is__", true}, {"__isnot__", false}} {
		is := c.is
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if len(n.Inputs) != 2 {
				return nil
			}
			return func(p *ProcessedNode) error {
				a, b := *p.Input(0), *p.Input(1)
				same := a.Kind() == b.Kind() && a.Equal(b)
				p.SetOutput(0, ivalue.FromBool(same == is))
				return nil
			}
		}, MetadataOnly) // tensors compare by identity
	}
	// prim::min/max of one list: the smallest / largest element.
	for _, c := range []struct {
		name string
		op   binOp
	}{{"prim::min", opMin}, {"prim::max", opMax}} {
		fn := scalarArith(c.op)
		RegisterNative(c.name, func(n *graph.Node) Kernel {
			if len(n.Inputs) != 1 || n.Inputs[0].Type.Kind != graph.ListType {
				return nil
			}
			return func(p *ProcessedNode) error {
				l := p.Input(0).List()
				if l == nil || len(l.Items) == 0 {
					return Errorf("%s() arg is an empty sequence", c.name)
				}
				r := l.Items[0]
				isBool := r.Kind() == ivalue.KindBool
				for _, it := range l.Items[1:] {
					var err error
					// elem < acc ? elem : acc, so a NaN is kept only
					// when it comes first
					if r, err = fn(it, r, true); err != nil {
						return err
					}
				}
				if isBool {
					r = ivalue.FromBool(r.Int() != 0)
				}
				p.SetOutput(0, r)
				return nil
			}
		})
	}
}
