package ops

import (
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Containers (native): list/tuple/dict construction and access, list
// mutation (append, _set_item), slicing, membership, plus
// prim::Uninitialized, prim::unchecked_cast, prim::RaiseException and
// aten::warn. Lists a node builds are reused across runs (p.OutList).

// ScriptException is the error prim::RaiseException returns: Class is
// the Python exception class (ValueError, ...), Msg its message.
type ScriptException struct {
	Class string
	Msg   string
}

func (e *ScriptException) Error() string { return e.Class + ": " + e.Msg }

func listArg(p *ProcessedNode, i int) (*ivalue.List, error) {
	v := p.Input(i)
	if k := v.Kind(); (k != ivalue.KindList && k != ivalue.KindTuple) || v.List() == nil {
		return nil, Errorf("expected a list as input %d, got %s", i, v.Kind())
	}
	return v.List(), nil
}

// normIndex wraps a Python index into [0, n).
func normIndex(i int64, n int) (int, error) {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, Errorf("list index out of range")
	}
	return int(i), nil
}

// sliceBounds computes Python slice bounds for length n.
func sliceBounds(n int, start, end *ivalue.IValue, step int64) (int, int, int, error) {
	if step == 0 {
		return 0, 0, 0, Errorf("slice step cannot be zero")
	}
	clamp := func(v ivalue.IValue, def int) int {
		if v.IsNone() {
			return def
		}
		i := v.AsInt()
		if i < 0 {
			i += int64(n)
			if i < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if i >= int64(n) {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return int(i)
	}
	if step > 0 {
		return clamp(*start, 0), clamp(*end, n), int(step), nil
	}
	return clamp(*start, n-1), clamp(*end, -1), int(step), nil
}

func sliceCount(s, e, step int) int {
	if step > 0 {
		if e <= s {
			return 0
		}
		return (e - s + step - 1) / step
	}
	if e >= s {
		return 0
	}
	return (s - e - step - 1) / (-step)
}

func init() {
	RegisterNative(graph.KindListConstruct, func(n *graph.Node) Kernel {
		return func(p *ProcessedNode) error {
			l := p.OutList(0, p.NumInputs(), false)
			for i := range l.Items {
				l.Items[i] = *p.Input(i)
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative(graph.KindTupleConstruct, func(n *graph.Node) Kernel {
		return func(p *ProcessedNode) error {
			l := p.OutList(0, p.NumInputs(), true)
			for i := range l.Items {
				l.Items[i] = *p.Input(i)
			}
			return nil
		}
	}, MetadataOnly)
	unpack := func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			if len(l.Items) != p.NumOutputs() {
				return Errorf("expected %d elements in a list but found %d", p.NumOutputs(), len(l.Items))
			}
			for i, it := range l.Items {
				p.SetOutput(i, it)
			}
			return nil
		}
	}
	RegisterNative(graph.KindListUnpack, unpack, MetadataOnly)
	RegisterNative(graph.KindTupleUnpack, unpack, MetadataOnly)
	RegisterNative("prim::TupleIndex", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			i, err := normIndex(p.Int(1), len(l.Items))
			if err != nil {
				return Errorf("tuple index out of range")
			}
			p.SetOutput(0, l.Items[i])
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::__getitem__", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 {
			return nil
		}
		switch n.Inputs[0].Type.Kind {
		case graph.ListType, graph.TupleType:
			return func(p *ProcessedNode) error {
				l, err := listArg(p, 0)
				if err != nil {
					return err
				}
				i, err := normIndex(p.Int(1), len(l.Items))
				if err != nil {
					return err
				}
				p.SetOutput(0, l.Items[i])
				return nil
			}
		case graph.DictType:
			return func(p *ProcessedNode) error {
				d := p.Input(0).Dict()
				if d == nil {
					return Errorf("expected a dict, got %s", p.Input(0).Kind())
				}
				v, ok := d.Get(*p.Input(1))
				if !ok {
					return &ScriptException{Class: "KeyError", Msg: FormatIValue(*p.Input(1))}
				}
				p.SetOutput(0, v)
				return nil
			}
		case graph.StringType:
			return func(p *ProcessedNode) error {
				s := p.Input(0).Str()
				i, err := normIndex(p.Int(1), len(s))
				if err != nil {
					return Errorf("string index out of range")
				}
				p.SetOutput(0, ivalue.FromString(s[i:i+1]))
				return nil
			}
		}
		return nil
	}, MetadataOnly)
	RegisterNative("aten::append", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			l.Items = append(l.Items, *p.Input(1))
			p.SetOutput(0, *p.Input(0))
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::_set_item", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 3 {
			return nil
		}
		if n.Inputs[0].Type.Kind == graph.DictType {
			return func(p *ProcessedNode) error {
				d := p.Input(0).Dict()
				if d == nil {
					return Errorf("expected a dict, got %s", p.Input(0).Kind())
				}
				d.Set(*p.Input(1), *p.Input(2))
				return nil
			}
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			i, err := normIndex(p.Int(1), len(l.Items))
			if err != nil {
				return err
			}
			l.Items[i] = *p.Input(2)
			if p.NumOutputs() > 0 {
				p.SetOutput(0, *p.Input(0))
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::len", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 || n.Inputs[0].Type.Kind == graph.TensorType {
			return nil
		}
		return func(p *ProcessedNode) error {
			v := p.Input(0)
			switch v.Kind() {
			case ivalue.KindList, ivalue.KindTuple:
				p.SetOutput(0, ivalue.FromInt(int64(len(v.List().Items))))
			case ivalue.KindString:
				p.SetOutput(0, ivalue.FromInt(int64(len(v.Str()))))
			case ivalue.KindDict:
				p.SetOutput(0, ivalue.FromInt(int64(len(v.Dict().Keys))))
			default:
				return Errorf("len: unsupported %s", v.Kind())
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative(graph.KindDictConstruct, func(n *graph.Node) Kernel {
		if len(n.Inputs)%2 != 0 {
			return nil
		}
		return func(p *ProcessedNode) error {
			d := p.Output(0).Dict()
			if d == nil || p.Fresh {
				d = &ivalue.Dict{}
				p.SetOutput(0, ivalue.DictOf(d))
			}
			d.Keys, d.Values = d.Keys[:0], d.Values[:0]
			for i := 0; i < p.NumInputs(); i += 2 {
				d.Set(*p.Input(i), *p.Input(i + 1))
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::__contains__", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 {
			return nil
		}
		return func(p *ProcessedNode) error {
			c, item := p.Input(0), *p.Input(1)
			found := false
			switch c.Kind() {
			case ivalue.KindDict:
				_, found = c.Dict().Get(item)
			case ivalue.KindList, ivalue.KindTuple:
				for _, it := range c.List().Items {
					if it.Equal(item) {
						found = true
						break
					}
				}
			case ivalue.KindString:
				found = strings.Contains(c.Str(), item.Str())
			default:
				return Errorf("__contains__: unsupported %s", c.Kind())
			}
			p.SetOutput(0, ivalue.FromBool(found))
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::list", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			v := p.Input(0)
			if v.Kind() == ivalue.KindString {
				s := v.Str()
				l := p.OutList(0, len(s), false)
				for i := range s {
					l.Items[i] = ivalue.FromString(s[i : i+1])
				}
				return nil
			}
			src, err := listArg(p, 0)
			if err != nil {
				return err
			}
			l := p.OutList(0, len(src.Items), false)
			copy(l.Items, src.Items)
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::slice", func(n *graph.Node) Kernel {
		if !n.Matches("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]") &&
			!n.Matches("aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str") {
			return nil
		}
		return func(p *ProcessedNode) error {
			v := p.Input(0)
			if v.Kind() == ivalue.KindString {
				s := v.Str()
				a, e, step, err := sliceBounds(len(s), p.Input(1), p.Input(2), p.Int(3))
				if err != nil {
					return err
				}
				var b strings.Builder
				for i, k := a, 0; k < sliceCount(a, e, step); i, k = i+step, k+1 {
					b.WriteByte(s[i])
				}
				p.SetOutput(0, ivalue.FromString(b.String()))
				return nil
			}
			src, err := listArg(p, 0)
			if err != nil {
				return err
			}
			a, e, step, err := sliceBounds(len(src.Items), p.Input(1), p.Input(2), p.Int(3))
			if err != nil {
				return err
			}
			cnt := sliceCount(a, e, step)
			l := p.OutList(0, cnt, false)
			for k, i := 0, a; k < cnt; k, i = k+1, i+step {
				l.Items[k] = src.Items[i]
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::add", func(n *graph.Node) Kernel {
		if !n.Matches("aten::add.t(t[] a, t[] b) -> t[]") {
			return nil
		}
		return func(p *ProcessedNode) error {
			a, err := listArg(p, 0)
			if err != nil {
				return err
			}
			b, err := listArg(p, 1)
			if err != nil {
				return err
			}
			l := p.OutList(0, len(a.Items)+len(b.Items), false)
			copy(l.Items, a.Items)
			copy(l.Items[len(a.Items):], b.Items)
			return nil
		}
	}, MetadataOnly)
	for _, name := range []string{"keys", "values"} {
		keys := name == "keys"
		RegisterNative("aten::"+name, func(n *graph.Node) Kernel {
			if len(n.Inputs) != 1 || n.Inputs[0].Type.Kind != graph.DictType {
				return nil
			}
			return func(p *ProcessedNode) error {
				d := p.Input(0).Dict()
				if d == nil {
					return Errorf("expected a dict, got %s", p.Input(0).Kind())
				}
				src := d.Values
				if keys {
					src = d.Keys
				}
				l := p.OutList(0, len(src), false)
				copy(l.Items, src)
				return nil
			}
		}, MetadataOnly)
	}
	RegisterNative(graph.KindUninitialized, func(n *graph.Node) Kernel {
		return func(p *ProcessedNode) error {
			p.SetOutput(0, ivalue.None())
			return nil
		}
	}, MetadataOnly)
	RegisterNative("prim::unchecked_cast", func(n *graph.Node) Kernel { return ewIdentity }, MetadataOnly)
	RegisterNative(graph.KindRaiseException, func(n *graph.Node) Kernel {
		return func(p *ProcessedNode) error {
			cls := "Exception"
			if p.NumInputs() > 1 && !p.IsNone(1) && p.Input(1).Str() != "" {
				cls = strings.TrimPrefix(p.Input(1).Str(), "builtins.")
			}
			return &ScriptException{Class: cls, Msg: p.Input(0).Str()}
		}
	})
	RegisterNative("aten::warn", func(n *graph.Node) Kernel {
		return func(p *ProcessedNode) error { return nil }
	})
}
