package tscode

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// dd is dedent for sources whose closing line is indented less.
func dd(s string) string { return dedent(strings.TrimRight(s, " \t")) }

// compileRun compiles root's forward from the given sources and runs it.
func compileRun(t *testing.T, root *obj, files map[string]string, args ...ivalue.IValue) (*Result, []ivalue.IValue) {
	t.Helper()
	for k, v := range files {
		files[k] = dd(v)
	}
	res, err := Compile(root, nil, srcs(files), "forward")
	require.NoError(t, err)
	sm, err := staticruntime.NewStaticModule(res.Graph, nil)
	require.NoError(t, err, res.Graph.String())
	out, err := sm.NewRuntime().Run(args...)
	require.NoError(t, err, res.Graph.String())
	return res, out
}

const outputsPy = `
	class Outputs(NamedTuple):
		logits : Tensor
		aux : Optional[Tensor]
		scale : int = 3
`

func TestCompileNamedTuple(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
	files := map[string]string{
		"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				def forward(self: __torch__.m.M, x: Tensor) -> Tuple[__torch__.m.Outputs, Tensor, int]:
					o = __torch__.m.Outputs(torch.mul(x, 2), aux=None)
					o0 = __torch__.m.make(o)
					logits = o0.logits
					y = torch.add(logits, o0[0])
					return (o0, y, torch.add(o0.scale, o[2]))
			def make(o: __torch__.m.Outputs) -> __torch__.m.Outputs:
				_0 = annotate(__torch__.m.Outputs, o)
				return _0
		`) + dd(outputsPy),
	}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	res, out := compileRun(t, root, files, ivalue.FromTensor(x))
	text := res.Graph.String()
	assert.Contains(t, text, "prim::TupleConstruct")
	require.Len(t, out, 1)
	items := out[0].List().Items
	require.Len(t, items, 3)
	nt := items[0].List().Items
	require.Len(t, nt, 3, "the NamedTuple is a tuple of its fields")
	assert.Equal(t, []float64{2, -4}, nt[0].Tensor().Float64s())
	assert.True(t, nt[1].IsNone())
	assert.Equal(t, int64(3), nt[2].Int(), "field default")
	assert.Equal(t, []float64{4, -8}, items[1].Tensor().Float64s())
	assert.Equal(t, int64(6), items[2].Int())

	// its type is a tuple type named after the class
	c := &compiler{src: srcs(map[string]string{"code/__torch__/m.py": dd(outputsPy)}), files: map[string]*fileInfo{}, tuples: map[string]*namedTuple{}, g: graph.New()}
	nt2, err := c.namedTupleOf("__torch__.m.Outputs")
	require.NoError(t, err)
	require.NotNil(t, nt2)
	assert.Equal(t, "(Tensor, Tensor?, int)", nt2.typ.String())
	assert.Equal(t, "__torch__.m.Outputs", nt2.typ.Name)
}

func TestCompileNamedTupleErrors(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{}}
	for _, c := range []struct{ body, err string }{
		{"o = __torch__.m.Outputs(x)\n\t\t\t\t\treturn o.logits", "m.py:5:9: __torch__.m.Outputs: missing field aux"},
		{"o = __torch__.m.Outputs(x, None)\n\t\t\t\t\treturn o.nope", "m.py:6:12: NamedTuple __torch__.m.Outputs has no field nope"},
		{"o = __torch__.m.Outputs(x, None, bogus=1)\n\t\t\t\t\treturn o.logits", "has no field bogus"},
		{"o = __torch__.m.Outputs(x, 1)\n\t\t\t\t\treturn o.logits", "field aux is declared Tensor?, got int"},
		{"o = __torch__.m.Thing(x)\n\t\t\t\t\treturn o", "constructing __torch__.m.Thing is not supported"},
	} {
		files := map[string]string{"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
					_ = 0
					` + c.body + `
			class Thing(Module):
				training : bool
		`)}
		files["code/__torch__/m.py"] += dd(outputsPy)
		_, err := Compile(root, nil, srcs(files), "forward")
		require.Error(t, err, c.body)
		assert.Contains(t, err.Error(), c.err)
	}
}

const getterPy = `
	class Getter(Module):
		training : bool
		return_layers : Dict[str, str]
		scales : Dict[str, float]
		def forward(self: __torch__.m.Getter, x: Tensor) -> Dict[str, Tensor]:
			out = torch.dict()
			return_layers = self.return_layers
			if torch.__contains__(return_layers, "relu"):
				_0 = torch._set_item(out, return_layers["relu"], torch.relu(x))
			else:
				pass
			if torch.__contains__(self.return_layers, "absent"):
				_1 = torch._set_item(out, "never", x)
			else:
				pass
			_2 = torch.items(self.scales)
			for _3 in range(torch.len(_2)):
				name, s = _2[_3]
				_4 = torch._set_item(out, name, torch.mul(x, s))
			for k in self.return_layers:
				_5 = torch._set_item(out, torch.add(k, "_key"), x)
			_6 = torch._set_item(out, "n", torch.mul(x, torch.len(self.return_layers)))
			return out
`

func strDict(kv ...ivalue.IValue) ivalue.IValue {
	d := &ivalue.Dict{}
	for i := 0; i < len(kv); i += 2 {
		d.Set(kv[i], kv[i+1])
	}
	return ivalue.DictOf(d)
}

func TestCompileDictAttribute(t *testing.T) {
	s := ivalue.FromString
	root := &obj{class: "__torch__.m.Getter", attrs: map[string]ivalue.IValue{
		"training":      ivalue.FromBool(false),
		"return_layers": strDict(s("relu"), s("feat"), s("layer4"), s("out")),
		"scales":        strDict(s("half"), ivalue.FromDouble(0.5), s("twice"), ivalue.FromDouble(2)),
	}}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	res, out := compileRun(t, root, map[string]string{"code/__torch__/m.py": getterPy}, ivalue.FromTensor(x))
	text := res.Graph.String()
	assert.NotContains(t, text, "__contains__", "membership in a frozen dict folds")
	assert.NotContains(t, text, "never")
	d := out[0].Dict()
	require.NotNil(t, d)
	var keys []string
	for _, k := range d.Keys {
		keys = append(keys, k.Str())
	}
	// Python: the same code on {"relu": "feat", "layer4": "out"} and
	// {"half": 0.5, "twice": 2.0} fills out in this order.
	assert.Equal(t, []string{"feat", "half", "twice", "relu_key", "layer4_key", "n"}, keys)
	want := map[string][]float64{"feat": {1, 0}, "half": {0.5, -1}, "twice": {2, -4}, "relu_key": {1, -2}, "n": {2, -4}}
	for k, w := range want {
		v, ok := d.Get(s(k))
		require.True(t, ok, k)
		assert.Equal(t, w, v.Tensor().Float64s(), k)
	}
}

func TestCompileDictAttributeErrors(t *testing.T) {
	s := ivalue.FromString
	for _, c := range []struct {
		code  string
		attrs map[string]ivalue.IValue
		err   string
	}{
		{`torch._set_item(self.d, "k", "v")`, map[string]ivalue.IValue{"d": strDict(s("a"), s("b"))},
			"m.py:4:10: aten::_set_item writes into a dict module attribute"},
		{`torch.update(self.d, self.d)`, map[string]ivalue.IValue{"d": strDict(s("a"), s("b"))},
			"writes into a dict module attribute"},
		{`torch.len(self.e)`, map[string]ivalue.IValue{"e": strDict(s("a"), ivalue.FromInt(1), s("b"), s("c"))},
			"dict attribute with entries of mixed or unsupported types"},
		{`torch.len(self.d)`, map[string]ivalue.IValue{"d": strDict(s("a"), ivalue.FromInt(1))},
			"dict attribute declared Dict(str, str) holds entries of other types"},
	} {
		root := &obj{class: "__torch__.m.M", attrs: c.attrs}
		src := dd(`
			class M(Module):
				d : Dict[str, str]
				def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
					_0 = ` + c.code + `
					return x
		`)
		_, err := Compile(root, nil, srcs(map[string]string{"code/__torch__/m.py": src}), "forward")
		require.Error(t, err, c.code)
		assert.Contains(t, err.Error(), c.err)
	}
}

// F.interpolate's printed dispatch: a branch on the input's rank (known
// only at run time) sets a flag that is False on both sides for another
// mode; the flag, and the kernels of other modes, fold away.
func TestCompileMergeConstantBranches(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"mode": ivalue.FromString("relu")}}
	files := map[string]string{"code/__torch__/m.py": `
		class M(Module):
			mode : str
			def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
				mode = self.mode
				if torch.eq(torch.dim(x), 3):
					_0 = torch.eq(mode, "sigmoid")
				else:
					_0 = False
				if _0:
					_1 = torch.sigmoid(x)
				else:
					_2 = torch.eq(torch.dim(x), 2) and torch.eq(mode, "tanh")
					if _2:
						_3 = torch.tanh(x)
					else:
						if torch.eq(torch.dim(x), 1):
							ops.prim.RaiseException("rank 1", "builtins.ValueError")
							y = uninitialized(Tensor)
						else:
							y = x
						_3 = torch.relu(y)
					_1 = _3
				return _1
	`}
	x := ivalue.F32Tensor([]float32{1, -2, 3, -4}, 2, 2)
	res, out := compileRun(t, root, files, ivalue.FromTensor(x))
	text := res.Graph.String()
	assert.NotContains(t, text, "sigmoid")
	assert.NotContains(t, text, "tanh")
	assert.Contains(t, text, "prim::RaiseException", "the rank check stays")
	assert.Equal(t, []float64{1, 0, 3, 0}, out[0].Tensor().Float64s())
}

// Metadata of frozen weights and torch.device("cpu") fold at compile time.
func TestCompileFoldTensorMeta(t *testing.T) {
	w := ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"weight": ivalue.FromTensor(w)}}
	files := map[string]string{"code/__torch__/m.py": `
		class M(Module):
			weight : Tensor
			def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
				weight = self.weight
				if torch.is_floating_point(weight):
					_0 = torch.eq(torch.dim(weight), 2)
				else:
					_0 = False
				if _0:
					_1 = torch.eq(ops.prim.dtype(weight), 6)
				else:
					_1 = False
				dev = torch.device("cpu")
				if _1:
					y = torch.add(x, torch.size(weight, 0))
				else:
					y = torch.sigmoid(x)
				return torch.to(y, dev)
	`}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	res, out := compileRun(t, root, files, ivalue.FromTensor(x))
	text := res.Graph.String()
	for _, s := range []string{"sigmoid", "is_floating_point", "prim::dtype", "aten::dim", "aten::device", "prim::If"} {
		assert.NotContains(t, text, s)
	}
	assert.Equal(t, []float64{3, 0}, out[0].Tensor().Float64s())
}

// MultiheadAttention's fast-path checks cast an Optional that is None
// here to Tensor on a path guarded by a condition known only at run time:
// the cast stays a node (a constant None of type Tensor would be an
// invalid graph), through compilation and the passes.
func TestCompileUncheckedCastOfNone(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"bias": ivalue.None()}}
	files := map[string]string{"code/__torch__/m.py": `
		class M(Module):
			bias : Optional[Tensor]
			def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
				bias = self.bias
				if bool(torch.gt(torch.sum(x), 100)):
					_0 = True
				else:
					_0 = False
				if _0:
					b = unchecked_cast(Tensor, bias)
					y = torch.add(x, b)
				else:
					y = torch.neg(x)
				return y
	`}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	res, out := compileRun(t, root, files, ivalue.FromTensor(x))
	require.NoError(t, res.Graph.Verify())
	assert.Contains(t, res.Graph.String(), "prim::unchecked_cast")
	assert.Equal(t, []float64{-1, 2}, out[0].Tensor().Float64s())
}

// and/or chains compile left-nested ((a and b) and c, as PyTorch does):
// values as Python's, and an operand after a decided one is not run.
func TestCompileBoolChains(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
	src := `
		class M(Module):
			training : bool
			def forward(self: __torch__.m.M, a: bool, b: bool, c: bool, l: List[int]) -> Tuple[bool, bool, bool, bool, bool]:
				inrange = torch.len(l) > 0 and l[0] > 0 and l[0] < 10
				return (a and b and c, a or b or c, a and b or c, a or b and c, inrange)
	`
	res, err := Compile(root, nil, srcs(map[string]string{"code/__torch__/m.py": dd(src)}), "forward")
	require.NoError(t, err)
	sm, err := staticruntime.NewStaticModule(res.Graph, nil)
	require.NoError(t, err)
	rt := sm.NewRuntime()
	for i, l := range [][]int64{nil, {5}, {20}, {-1}, {3}, {0}, {9}, {10}} {
		a, b, c := i&4 != 0, i&2 != 0, i&1 != 0
		items := make([]ivalue.IValue, len(l))
		for j, v := range l {
			items[j] = ivalue.FromInt(v)
		}
		out, err := rt.Run(ivalue.FromBool(a), ivalue.FromBool(b), ivalue.FromBool(c), ivalue.NewList(items...))
		require.NoError(t, err, "a=%v b=%v c=%v l=%v", a, b, c, l)
		require.Len(t, out, 1)
		got := out[0].List().Items
		want := []bool{a && b && c, a || b || c, a && b || c, a || b && c, len(l) > 0 && l[0] > 0 && l[0] < 10}
		for k := range want {
			assert.Equal(t, want[k], got[k].Bool(), "output %d for a=%v b=%v c=%v l=%v", k, a, b, c, l)
		}
	}
}
