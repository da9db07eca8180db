package ops

import (
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Native ops of the TorchScript language that real models' code calls
// besides tensor math: dict constructors and methods, string methods
// (find, startswith, ...), range helpers of for loops, devices and meta
// queries (is_floating_point, is_autocast_enabled, is_nested). Their
// semantics follow PyTorch 1.13's register_prim_ops.cpp.

// outDict returns the (emptied) dict to fill for output i, reused across
// runs unless the node is Fresh, as OutList does for lists.
func outDict(p *ProcessedNode, i int) *ivalue.Dict {
	d := p.Output(i).Dict()
	if d == nil || p.Fresh {
		d = &ivalue.Dict{}
		p.SetOutput(i, ivalue.DictOf(d))
	}
	d.Keys, d.Values = d.Keys[:0], d.Values[:0]
	return d
}

func dictArg(p *ProcessedNode, i int) (*ivalue.Dict, error) {
	v := p.Input(i)
	if v.Kind() != ivalue.KindDict || v.Dict() == nil {
		return nil, Errorf("expected a dict as input %d, got %s", i, v.Kind())
	}
	return v.Dict(), nil
}

func isDict(v *graph.Value) bool { return v.Type.Kind == graph.DictType }

// strRange applies Python's start/end slice arguments of str.find and
// friends as PyTorch's stringFindImpl does: negative start counts from
// the end (clamped at 0), negative end from one past the end; an empty
// or inverted range leaves "" to search.
func strRange(s string, start, end int64) (string, int64, error) {
	size := int64(len(s))
	if start < 0 {
		start = max(0, size+start)
	}
	if end < 0 {
		end = max(0, size+end+1)
	}
	if end <= start {
		return "", start, nil
	}
	if start > size {
		// std::string::substr throws out_of_range here
		return "", start, Errorf("string index out of range: start %d is past the end of a string of length %d", start, size)
	}
	return s[start:min(end, size)], start, nil
}

func init() {
	// dict(): an empty dict; dict(d): a shallow copy; dict(pairs): from a
	// list of (key, value) tuples (later keys win, as in Python).
	RegisterNative("aten::dict", func(n *graph.Node) Kernel {
		switch {
		case len(n.Inputs) == 0:
			return func(p *ProcessedNode) error {
				outDict(p, 0)
				return nil
			}
		case len(n.Inputs) == 1 && isDict(n.Inputs[0]):
			return func(p *ProcessedNode) error {
				src, err := dictArg(p, 0)
				if err != nil {
					return err
				}
				d := outDict(p, 0)
				d.Keys = append(d.Keys, src.Keys...)
				d.Values = append(d.Values, src.Values...)
				return nil
			}
		case len(n.Inputs) == 1 && n.Inputs[0].Type.Kind == graph.ListType:
			return func(p *ProcessedNode) error {
				src, err := listArg(p, 0)
				if err != nil {
					return err
				}
				d := outDict(p, 0)
				for _, it := range src.Items {
					if it.List() == nil || len(it.List().Items) != 2 {
						return Errorf("dict: expected (key, value) pairs, got %s", it.Kind())
					}
					d.Set(it.List().Items[0], it.List().Items[1])
				}
				return nil
			}
		}
		return nil
	}, MetadataOnly)
	// copy(): a shallow copy of a list (copy.t) or dict (copy.Dict_*).
	RegisterNative("aten::copy", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 {
			return nil
		}
		if n.Inputs[0].Type.Kind == graph.ListType {
			return func(p *ProcessedNode) error {
				src, err := listArg(p, 0)
				if err != nil {
					return err
				}
				l := p.OutList(0, len(src.Items), false)
				copy(l.Items, src.Items)
				return nil
			}
		}
		if !isDict(n.Inputs[0]) {
			return nil
		}
		return func(p *ProcessedNode) error {
			src, err := dictArg(p, 0)
			if err != nil {
				return err
			}
			d := outDict(p, 0)
			d.Keys = append(d.Keys, src.Keys...)
			d.Values = append(d.Values, src.Values...)
			return nil
		}
	}, MetadataOnly)
	// items(): a list of (key, value) tuples in insertion order.
	RegisterNative("aten::items", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 || !isDict(n.Inputs[0]) {
			return nil
		}
		return func(p *ProcessedNode) error {
			d, err := dictArg(p, 0)
			if err != nil {
				return err
			}
			l := p.OutList(0, len(d.Keys), false)
			for i := range d.Keys {
				// the previous run's pairs are dead (outputs live until the
				// next run) unless the node is Fresh: refill them
				if pr := l.Items[i].List(); !p.Fresh && l.Items[i].Kind() == ivalue.KindTuple && pr != nil && len(pr.Items) == 2 {
					pr.Items[0], pr.Items[1] = d.Keys[i], d.Values[i]
					continue
				}
				l.Items[i] = ivalue.NewTuple(d.Keys[i], d.Values[i])
			}
			return nil
		}
	}, MetadataOnly)
	// get(key) -> value or None; get(key, default).
	RegisterNative("aten::get", func(n *graph.Node) Kernel {
		if (len(n.Inputs) != 2 && len(n.Inputs) != 3) || !isDict(n.Inputs[0]) {
			return nil
		}
		return func(p *ProcessedNode) error {
			d, err := dictArg(p, 0)
			if err != nil {
				return err
			}
			v, ok := d.Get(*p.Input(1))
			switch {
			case ok:
				p.SetOutput(0, v)
			case p.NumInputs() == 3:
				p.SetOutput(0, *p.Input(2))
			default:
				p.SetOutput(0, ivalue.None())
			}
			return nil
		}
	}, MetadataOnly)
	// update(other): insert or overwrite other's entries, in its order.
	RegisterNative("aten::update", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 || !isDict(n.Inputs[0]) {
			return nil
		}
		return func(p *ProcessedNode) error {
			d, err := dictArg(p, 0)
			if err != nil {
				return err
			}
			o, err := dictArg(p, 1)
			if err != nil {
				return err
			}
			for i := range o.Keys {
				d.Set(o.Keys[i], o.Values[i])
			}
			return nil
		}
	}, MetadataOnly)
	RegisterNative("aten::clear", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			switch v := p.Input(0); v.Kind() {
			case ivalue.KindDict:
				d := v.Dict()
				d.Keys, d.Values = d.Keys[:0], d.Values[:0]
			case ivalue.KindList:
				v.List().Items = v.List().Items[:0]
			default:
				return Errorf("clear: expected a list or dict, got %s", v.Kind())
			}
			return nil
		}
	}, MetadataOnly)

	// String methods with Python's start/end arguments.
	for _, c := range []struct {
		name string
		f    func(s, sub string, start int64) ivalue.IValue
	}{
		{"find", func(s, sub string, start int64) ivalue.IValue {
			if i := strings.Index(s, sub); i >= 0 {
				return ivalue.FromInt(int64(i) + start)
			}
			return ivalue.FromInt(-1)
		}},
		{"rfind", func(s, sub string, start int64) ivalue.IValue {
			if i := strings.LastIndex(s, sub); i >= 0 {
				return ivalue.FromInt(int64(i) + start)
			}
			return ivalue.FromInt(-1)
		}},
	} {
		f := c.f
		schema := "aten::" + c.name + "(str self, str substr, int start=0, int end=-1) -> int"
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				s, start, err := strRange(p.Input(0).Str(), p.Int(2), p.Int(3))
				if err != nil {
					return err
				}
				p.SetOutput(0, f(s, p.Input(1).Str(), start))
				return nil
			}
		})
	}
	// startswith/endswith take s[start:] when end < start: PyTorch's
	// substr(start, end - start) with a negative count.
	for _, c := range []struct {
		name string
		f    func(s, sub string) bool
	}{{"startswith", strings.HasPrefix}, {"endswith", strings.HasSuffix}} {
		f, schema := c.f, "aten::"+c.name+"(str self, str substr, int start=0, int end=-1) -> bool"
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				s := p.Input(0).Str()
				size, start, end := int64(len(s)), p.Int(2), p.Int(3)
				if start < 0 {
					start = max(0, size+start)
				}
				if end < 0 {
					end = max(0, size+end+1)
				}
				if start > size {
					return Errorf("string index out of range: start %d is past the end of a string of length %d", start, size)
				}
				stop := size
				if end >= start {
					stop = min(end, size)
				}
				p.SetOutput(0, ivalue.FromBool(f(s[start:stop], p.Input(1).Str())))
				return nil
			}
		})
	}
	for _, c := range []struct {
		name string
		f    func(string) string
	}{{"lower", strings.ToLower}, {"upper", strings.ToUpper}} {
		f, schema := c.f, "aten::"+c.name+"(str self) -> str"
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				p.SetOutput(0, ivalue.FromString(f(p.Input(0).Str())))
				return nil
			}
		})
	}
	RegisterNative("aten::join", func(n *graph.Node) Kernel {
		if !n.Matches("aten::join(str self, str[] values) -> str") {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 1)
			if err != nil {
				return err
			}
			var b strings.Builder
			for i, it := range l.Items {
				if i > 0 {
					b.WriteString(p.Input(0).Str())
				}
				b.WriteString(it.Str())
			}
			p.SetOutput(0, ivalue.FromString(b.String()))
			return nil
		}
	})

	// for i in range(lo, hi, step): the trip count and the i-th value.
	RegisterNative("aten::__range_length", func(n *graph.Node) Kernel {
		if !n.Matches("aten::__range_length(int lo, int hi, int step) -> int") {
			return nil
		}
		return func(p *ProcessedNode) error {
			lo, hi, step := p.Int(0), p.Int(1), p.Int(2)
			var r int64
			switch {
			case step == 0:
				return Errorf("range() arg 3 must not be zero")
			case step > 0 && lo < hi:
				r = 1 + (hi-1-lo)/step
			case step < 0 && lo > hi:
				r = 1 + (lo-1-hi)/(-step)
			}
			p.SetOutput(0, ivalue.FromInt(r))
			return nil
		}
	})
	RegisterNative("aten::__derive_index", func(n *graph.Node) Kernel {
		if !n.Matches("aten::__derive_index(int index, int start, int step) -> int") {
			return nil
		}
		return func(p *ProcessedNode) error {
			p.SetOutput(0, ivalue.FromInt(p.Int(1)+p.Int(0)*p.Int(2)))
			return nil
		}
	})

	// torch.device("cpu"): gosr runs on the CPU only, but a model may name
	// another device in code it never takes (or only compares); the name
	// must be a valid device string all the same.
	RegisterNative("aten::device", func(n *graph.Node) Kernel {
		if !n.Matches("aten::device(str a) -> Device") {
			return nil
		}
		return func(p *ProcessedNode) error {
			s := p.Input(0).Str()
			if err := checkDevice(s); err != nil {
				return err
			}
			p.SetOutput(0, ivalue.FromDevice(s))
			return nil
		}
	})

	tensorMeta := func(op, schema string, f func(t *ivalue.Tensor) bool) {
		RegisterNative(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				t := p.Tensor(0)
				if t == nil {
					return Errorf("%s: expected a tensor, got %s", op, p.Input(0).Kind())
				}
				p.SetOutput(0, ivalue.FromBool(f(t)))
				return nil
			}
		}, MetadataOnly)
	}
	tensorMeta("aten::is_floating_point", "aten::is_floating_point(Tensor self) -> bool",
		func(t *ivalue.Tensor) bool { return t.DType().IsFloat() })
	tensorMeta("aten::is_complex", "aten::is_complex(Tensor self) -> bool",
		func(t *ivalue.Tensor) bool { return false }) // gosr has no complex dtypes
	tensorMeta("prim::is_nested", "prim::is_nested(Tensor a) -> bool",
		func(t *ivalue.Tensor) bool { return false }) // nor nested tensors
	tensorMeta("aten::is_contiguous", "aten::is_contiguous(Tensor self) -> bool",
		func(t *ivalue.Tensor) bool { return t.IsContiguous() })
	tensorMeta("aten::is_signed", "aten::is_signed(Tensor self) -> bool",
		func(t *ivalue.Tensor) bool { return t.DType() != ivalue.Uint8 && t.DType() != ivalue.Bool })
	tensorMeta("prim::is_cpu", "prim::is_cpu(Tensor a) -> bool",
		func(t *ivalue.Tensor) bool { return t.Device().Type != ivalue.CUDA }) // libtorch-cpu is CPU to PyTorch
	// gosr's tensors are dense CPU tensors that never record gradients.
	for _, name := range []string{"requires_grad", "is_sparse", "is_sparse_csr", "is_mkldnn", "is_quantized",
		"is_meta", "is_mps", "is_xpu", "is_ipu", "is_vulkan", "is_ort"} {
		tensorMeta("prim::"+name, "prim::"+name+"(Tensor a) -> bool", func(t *ivalue.Tensor) bool { return false })
	}
	// Global state queries, decided for gosr's inference: no autocast, no
	// gradient recording, and the code runs as TorchScript.
	for _, c := range []struct {
		name string
		v    bool
	}{{"is_autocast_enabled", false}, {"is_autocast_cpu_enabled", false}, {"is_grad_enabled", false}, {"is_scripting", true}} {
		v, schema := c.v, "aten::"+c.name+"() -> bool"
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				p.SetOutput(0, ivalue.FromBool(v))
				return nil
			}
		})
	}
	// sum(list) of ints or bools (an int) or floats (a float, added left to
	// right as Python does).
	RegisterNative("aten::sum", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 || n.Inputs[0].Type.Kind != graph.ListType {
			return nil
		}
		switch n.Inputs[0].Type.Elem().Kind {
		case graph.IntType, graph.BoolType:
			return func(p *ProcessedNode) error {
				l, err := listArg(p, 0)
				if err != nil {
					return err
				}
				var s int64
				for _, it := range l.Items {
					s += it.Int()
				}
				p.SetOutput(0, ivalue.FromInt(s))
				return nil
			}
		case graph.FloatType:
			return func(p *ProcessedNode) error {
				l, err := listArg(p, 0)
				if err != nil {
					return err
				}
				s := 0.0
				for _, it := range l.Items {
					s += it.Double()
				}
				p.SetOutput(0, ivalue.FromDouble(s))
				return nil
			}
		}
		return nil
	})
	// all(list) / any(list) of bools, ints, floats or strs: Python truthiness.
	for _, c := range []struct {
		name string
		all  bool
	}{{"all", true}, {"any", false}} {
		all := c.all
		RegisterNative("aten::"+c.name, func(n *graph.Node) Kernel {
			if len(n.Inputs) != 1 || n.Inputs[0].Type.Kind != graph.ListType || n.Inputs[0].Type.Elem().Kind == graph.TensorType {
				return nil
			}
			return func(p *ProcessedNode) error {
				l, err := listArg(p, 0)
				if err != nil {
					return err
				}
				r := all
				for _, it := range l.Items {
					var truth bool
					switch it.Kind() {
					case ivalue.KindString:
						truth = it.Str() != ""
					case ivalue.KindDouble:
						truth = it.Double() != 0
					default:
						truth = it.Int() != 0
					}
					if truth != all {
						r = !all
						break
					}
				}
				p.SetOutput(0, ivalue.FromBool(r))
				return nil
			}
		})
	}
}

// deviceTypes are the device type names c10::Device parses.
var deviceTypes = map[string]bool{
	"cpu": true, "cuda": true, "mkldnn": true, "opengl": true, "opencl": true, "ideep": true, "hip": true,
	"ve": true, "fpga": true, "ort": true, "xla": true, "lazy": true, "vulkan": true, "mps": true,
	"meta": true, "hpu": true, "ipu": true, "xpu": true, "mtia": true, "privateuseone": true,
}

// checkDevice validates a device string as c10::Device's constructor:
// a type name, optionally ":" and a non-negative index without leading
// zeros.
func checkDevice(s string) error {
	typ, idx, hasIdx := strings.Cut(s, ":")
	if !deviceTypes[typ] {
		return Errorf("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, xla, lazy, vulkan, mps, meta, hpu, privateuseone device type at start of device string: %s", s)
	}
	if hasIdx {
		ok := idx != "" && (idx == "0" || idx[0] != '0')
		for _, r := range idx {
			ok = ok && r >= '0' && r <= '9'
		}
		if !ok {
			return Errorf("Invalid device string: '%s'", s)
		}
	}
	return nil
}
