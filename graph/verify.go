package graph

import (
	"fmt"
	"strings"

	"github.com/gosr/gosr/ivalue"
)

// Verify checks the graph's invariants: producer and use records agree
// with node inputs and outputs, every value is defined before use in the
// same or an enclosing block, prim::If / prim::Loop / prim::Constant are
// well formed, and subgraphs verify too. Errors name the node (kind and
// outputs) and what was expected.
func (g *Graph) Verify() error {
	v := &verifier{g: g, defined: map[*Value]bool{}}
	return v.block(g.Block)
}

type verifier struct {
	g       *Graph
	defined map[*Value]bool // values in scope (removed when their block ends)
	// recorded holds the checked use records of values with many uses,
	// so that finding an input's record is not a scan of its uses (a
	// value used n times, as x in x + x + ... + x, made Verify O(n²)).
	recorded map[useKey]bool
}

type useKey struct {
	user  *Node
	index int
}

// manyUses is the number of uses above which a value's use records are
// looked up in verifier.recorded rather than scanned.
const manyUses = 16

// describe names a node for error messages: kind, outputs, source.
func describe(n *Node) string {
	var b strings.Builder
	b.WriteString(n.Kind)
	if len(n.Outputs) > 0 {
		names := make([]string, len(n.Outputs))
		for i, o := range n.Outputs {
			if o == nil {
				names[i] = "<nil>"
			} else {
				names[i] = o.String()
			}
		}
		b.WriteString(" (producing " + strings.Join(names, ", ") + ")")
	} else {
		b.WriteString(" (no outputs)")
	}
	if n.SourceRange != "" {
		b.WriteString(" at " + n.SourceRange)
	}
	return b.String()
}

func (v *verifier) block(b *Block) error {
	if b.Param == nil || b.Return == nil {
		return fmt.Errorf("block without Param/Return node")
	}
	var scope []*Value
	defer func() {
		for _, x := range scope {
			delete(v.defined, x)
		}
	}()
	define := func(n *Node) error {
		for i, o := range n.Outputs {
			if o == nil {
				return fmt.Errorf("%s: output %d is nil", describe(n), i)
			}
			if o.Node != n || o.Offset != i {
				return fmt.Errorf("%s: output %d (%s) records producer %s and offset %d, expected this node and %d", describe(n), i, o, kindOf(o.Node), o.Offset, i)
			}
			if o.Type == nil {
				return fmt.Errorf("%s: output %s has no type", describe(n), o)
			}
			if v.defined[o] {
				return fmt.Errorf("%s: output %s defined twice", describe(n), o)
			}
			for _, u := range o.Uses {
				if u.User == nil || u.Index < 0 || u.Index >= len(u.User.Inputs) || u.User.Inputs[u.Index] != o {
					return fmt.Errorf("%s: output %s has a stale use record (input %d of %s)", describe(n), o, u.Index, kindOf(u.User))
				}
				if len(o.Uses) > manyUses {
					if v.recorded == nil {
						v.recorded = map[useKey]bool{}
					}
					// A record checked above names an input that is o, so
					// (user, index) identifies o's record.
					v.recorded[useKey{u.User, u.Index}] = true
				}
			}
			v.defined[o] = true
			scope = append(scope, o)
		}
		return nil
	}
	if err := define(b.Param); err != nil {
		return fmt.Errorf("block parameters: %w", err)
	}
	for _, n := range b.Nodes {
		if n == nil {
			return fmt.Errorf("nil node in block")
		}
		if n.Owner != b {
			return fmt.Errorf("%s: Owner is not the block holding it", describe(n))
		}
		if err := v.uses(n); err != nil {
			return err
		}
		if err := v.node(n); err != nil {
			return err
		}
		for _, sb := range n.Blocks {
			if sb.Owner != n {
				return fmt.Errorf("%s: a sub-block's Owner is not the node", describe(n))
			}
			if err := v.block(sb); err != nil {
				return err
			}
		}
		if sg := Subgraph(n); sg != nil {
			if err := sg.Verify(); err != nil {
				return fmt.Errorf("%s: subgraph: %w", describe(n), err)
			}
		}
		if err := define(n); err != nil {
			return err
		}
	}
	if err := v.uses(b.Return); err != nil {
		if b.Owner == nil {
			return fmt.Errorf("graph outputs: %w", err)
		}
		return fmt.Errorf("block of %s returns: %w", describe(b.Owner), err)
	}
	return nil
}

func kindOf(n *Node) string {
	if n == nil {
		return "<none>"
	}
	return n.Kind
}

// uses checks n's inputs are in scope and recorded as uses.
func (v *verifier) uses(n *Node) error {
	for i, in := range n.Inputs {
		if in == nil {
			return fmt.Errorf("%s: input %d is nil", describe(n), i)
		}
		if !v.defined[in] {
			return fmt.Errorf("%s: input %d %s is not defined before this node in the same or an enclosing block", describe(n), i, in)
		}
		found := false
		if len(in.Uses) > manyUses {
			found = v.recorded[useKey{n, i}]
		} else {
			for _, u := range in.Uses {
				if u.User == n && u.Index == i {
					found = true
					break
				}
			}
		}
		if !found {
			return fmt.Errorf("%s: input %d %s has no use record for this node", describe(n), i, in)
		}
	}
	return nil
}

func isKind(t *Type, k TypeKind) bool { return t != nil && t.Kind == k }

// node checks the op-specific structure of control flow and constants.
func (v *verifier) node(n *Node) error {
	switch n.Kind {
	case KindIf:
		if len(n.Inputs) != 1 || !isKind(n.Inputs[0].Type, BoolType) {
			return fmt.Errorf("%s: expected one bool condition input, got %d inputs", describe(n), len(n.Inputs))
		}
		if len(n.Blocks) != 2 {
			return fmt.Errorf("%s: expected 2 blocks (then, else), got %d", describe(n), len(n.Blocks))
		}
		for i, b := range n.Blocks {
			if len(b.Inputs()) != 0 {
				return fmt.Errorf("%s: block%d takes %d parameters, expected none", describe(n), i, len(b.Inputs()))
			}
			if len(b.Outputs()) != len(n.Outputs) {
				return fmt.Errorf("%s: block%d returns %d values, expected %d (one per output)", describe(n), i, len(b.Outputs()), len(n.Outputs))
			}
		}
	case KindLoop:
		if len(n.Inputs) < 2 || !isKind(n.Inputs[0].Type, IntType) || !isKind(n.Inputs[1].Type, BoolType) {
			return fmt.Errorf("%s: expected inputs (int max trip count, bool condition, carried...)", describe(n))
		}
		carried := len(n.Inputs) - 2
		if len(n.Blocks) != 1 {
			return fmt.Errorf("%s: expected 1 body block, got %d", describe(n), len(n.Blocks))
		}
		body := n.Blocks[0]
		if len(body.Inputs()) != 1+carried || !isKind(body.Inputs()[0].Type, IntType) {
			return fmt.Errorf("%s: body parameters: expected (int i, %d carried), got %d parameters", describe(n), carried, len(body.Inputs()))
		}
		if len(body.Outputs()) != 1+carried || !isKind(body.Outputs()[0].Type, BoolType) {
			return fmt.Errorf("%s: body returns: expected (bool condition, %d carried), got %d values", describe(n), carried, len(body.Outputs()))
		}
		if len(n.Outputs) != carried {
			return fmt.Errorf("%s: %d outputs, expected %d (one per carried value)", describe(n), len(n.Outputs), carried)
		}
	case KindConstant:
		if len(n.Inputs) != 0 {
			return fmt.Errorf("%s: expected no inputs, got %d", describe(n), len(n.Inputs))
		}
		if len(n.Blocks) != 0 {
			return fmt.Errorf("%s: expected no blocks", describe(n))
		}
		if len(n.Outputs) != 1 {
			return fmt.Errorf("%s: expected 1 output, got %d", describe(n), len(n.Outputs))
		}
		t := n.Outputs[0].Type
		val, ok := n.Attr("value")
		if !ok {
			// None, or a function constant (prim::Constant[name="relu"]).
			if t.Kind == NoneType || t.Kind == OptionalType || t.Kind == ClassType || t.Kind == AnyType {
				return nil
			}
			return fmt.Errorf("%s: no value, expected a value of type %s", describe(n), typeText(t))
		}
		if !valueFits(val, t) {
			return fmt.Errorf("%s: value %s does not fit type %s", describe(n), val.Kind(), typeText(t))
		}
	}
	return nil
}

// valueFits reports whether constant v can have static type t.
func valueFits(v ivalue.IValue, t *Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case AnyType:
		return true
	case OptionalType:
		return v.IsNone() || valueFits(v, t.Elem())
	case NoneType:
		return v.IsNone()
	case TensorType:
		if !v.IsTensor() {
			return false
		}
		x := v.Tensor()
		return IsUnboundTensor(x) || tensorFits(x, t) == nil
	case IntType, LayoutType, ScalarTypeType, MemoryFormatType:
		return v.Kind() == ivalue.KindInt
	case FloatType:
		return v.Kind() == ivalue.KindDouble
	case NumberType:
		return v.IsNumber()
	case BoolType:
		return v.Kind() == ivalue.KindBool
	case StringType:
		return v.Kind() == ivalue.KindString
	case DeviceType:
		return v.Kind() == ivalue.KindDevice
	case ListType:
		if v.Kind() != ivalue.KindList {
			return false
		}
		if v.List() != nil {
			for _, it := range v.List().Items {
				if !valueFits(it, t.Elem()) {
					return false
				}
			}
		}
		return true
	case TupleType:
		if v.Kind() != ivalue.KindTuple || v.List() == nil || len(v.List().Items) != len(t.Elems) {
			return false
		}
		for i, it := range v.List().Items {
			if !valueFits(it, t.Elems[i]) {
				return false
			}
		}
		return true
	case DictType:
		if v.Kind() != ivalue.KindDict || len(t.Elems) != 2 {
			return false
		}
		if d := v.Dict(); d != nil {
			for i := range d.Keys {
				if !valueFits(d.Keys[i], t.Elems[0]) || i >= len(d.Values) || !valueFits(d.Values[i], t.Elems[1]) {
					return false
				}
			}
		}
		return true
	}
	return false
}
