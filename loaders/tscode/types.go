package tscode

import (
	"strings"

	"github.com/gosr/gosr/graph"
)

// typeOf reads a type annotation: Tensor, int, List[int], Optional[Tensor],
// Tuple[Tensor, int], Dict[str, Tensor], Final[int],
// __torch__.torch.nn.modules.linear.Linear, NoneType, ...
func (c *compiler) typeOf(e Expr) (*graph.Type, error) {
	if e == nil {
		return graph.Tensor, nil // TorchScript's default for unannotated parameters
	}
	switch e := e.(type) {
	case *Name:
		switch e.ID {
		case "Tensor":
			return graph.Tensor, nil
		case "int":
			return graph.Int, nil
		case "float":
			return graph.Float, nil
		case "bool":
			return graph.Bool, nil
		case "str":
			return graph.Str, nil
		case "NoneType", "None":
			return graph.None, nil
		case "Device":
			return graph.Device, nil
		case "Any":
			return graph.Any, nil
		case "number", "Scalar":
			return graph.Number, nil
		case "Tuple":
			return graph.TupleOf(), nil
		case "List":
			return graph.ListOf(graph.Any), nil
		}
	case *Const:
		if e.Kind == ConstNone {
			return graph.None, nil
		}
	case *Attribute:
		if name, ok := dotted(e); ok {
			switch {
			case strings.HasPrefix(name, "__torch__."):
				nt, err := c.namedTupleOf(name)
				if err != nil {
					return nil, err
				}
				if nt != nil {
					return nt.typ, nil
				}
				return graph.ClassOf(name), nil
			case name == "torch.Tensor":
				return graph.Tensor, nil
			case name == "torch.device":
				return graph.Device, nil
			}
		}
	case *Subscript:
		base, ok := e.X.(*Name)
		if !ok {
			break
		}
		var args []Expr
		if t, ok := e.Index.(*Tuple); ok {
			args = t.Elts
		} else {
			args = []Expr{e.Index}
		}
		elems := make([]*graph.Type, len(args))
		for i, a := range args {
			t, err := c.typeOf(a)
			if err != nil {
				return nil, err
			}
			elems[i] = t
		}
		switch {
		case base.ID == "List" && len(elems) == 1:
			return graph.ListOf(elems[0]), nil
		case base.ID == "Optional" && len(elems) == 1:
			return graph.OptionalOf(elems[0]), nil
		case base.ID == "Final" && len(elems) == 1:
			return elems[0], nil
		case base.ID == "Tuple":
			if len(args) == 1 {
				if t, ok := e.Index.(*Tuple); ok && len(t.Elts) == 0 {
					elems = nil // Tuple[()]
				}
			}
			return graph.TupleOf(elems...), nil
		case base.ID == "Dict" && len(elems) == 2:
			return graph.DictOf(elems[0], elems[1]), nil
		case base.ID == "Future" && len(elems) == 1:
			return graph.FutureOf(elems[0]), nil
		}
	}
	return nil, c.errf(e, "unsupported type annotation %s (supported: Tensor, int, float, bool, str, Device, NoneType, Any, List[T], Optional[T], Tuple[...], Dict[K, V], Final[T], __torch__ classes)", exprText(e))
}

// dotted returns "a.b.c" for a chain of attribute accesses on a name.
// It loops rather than recurses: a chain may be as long as its source.
func dotted(e Expr) (string, bool) {
	var parts []string
	for {
		switch x := e.(type) {
		case *Name:
			if len(parts) == 0 {
				return x.ID, true
			}
			parts = append(parts, x.ID)
			for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
				parts[i], parts[j] = parts[j], parts[i]
			}
			return strings.Join(parts, "."), true
		case *Attribute:
			parts = append(parts, x.Attr)
			e = x.X
		default:
			return "", false
		}
	}
}

// exprText is a short rendering of e for error messages.
func exprText(e Expr) string { return exprTextN(e, 0) }

func exprTextN(e Expr, depth int) string {
	if depth > 20 {
		return "..."
	}
	exprText := func(e Expr) string { return exprTextN(e, depth+1) }
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *Name:
		return e.ID
	case *Attribute:
		return exprText(e.X) + "." + e.Attr
	case *Const:
		switch e.Kind {
		case ConstNone:
			return "None"
		case ConstString:
			return `"` + e.Str + `"`
		}
		return "constant"
	case *Call:
		return exprText(e.Func) + "(...)"
	case *Subscript:
		return exprText(e.X) + "[...]"
	}
	return strings.TrimPrefix(strings.TrimPrefix(typeName(e), "*"), "tscode.")
}
