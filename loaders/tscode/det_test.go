package tscode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// The constructs torchvision's scripted detection models use, as
// torch.jit.save prints them (transform.py, anchor_utils.py, poolers.py,
// _utils.py of torchvision 0.14).

const imageListPy = `
	class ImageList:
		tensors : Tensor
		image_sizes : List[Tuple[int, int]]
		def __init__(self: __torch__.m.ImageList,
			tensors: Tensor,
			image_sizes: List[Tuple[int, int]]) -> NoneType:
			self.tensors = tensors
			self.image_sizes = image_sizes
			return None
		def scaled(self: __torch__.m.ImageList, k: float) -> __torch__.m.ImageList:
			_0 = __torch__.m.ImageList.__new__(__torch__.m.ImageList)
			_1 = (_0).__init__(torch.mul(self.tensors, k), self.image_sizes, )
			return _0
`

func TestCompileScriptClass(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
	files := map[string]string{
		"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				def forward(self: __torch__.m.M, x: Tensor) -> Tuple[Tensor, int]:
					il = __torch__.m.ImageList.__new__(__torch__.m.ImageList)
					_0 = (il).__init__(x, [(2, 3)], )
					il2 = (il).scaled(3., )
					sizes = il2.image_sizes
					return (torch.add(il2.tensors, il.tensors), sizes[0][1])
		`) + dd(imageListPy),
	}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	res, out := compileRun(t, root, files, ivalue.FromTensor(x))
	assert.Contains(t, res.Graph.String(), "prim::TupleConstruct")
	items := out[0].List().Items
	assert.Equal(t, []float32{4, -8}, items[0].Tensor().F32())
	assert.Equal(t, int64(3), items[1].AsInt())
}

func TestCompileScriptClassErrors(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
	for _, tc := range []struct{ name, body, want string }{
		{"field assigned after __init__", `
					il = __torch__.m.ImageList.__new__(__torch__.m.ImageList)
					_0 = (il).__init__(x, [(2, 3)], )
					il.tensors = x
					return il.tensors
		`, "assigning tensors of a built __torch__.m.ImageList object is not supported"},
		{"used before __init__", `
					il = __torch__.m.ImageList.__new__(__torch__.m.ImageList)
					return il.tensors
		`, "read before __init__ assigned it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				def forward(self: __torch__.m.M, x: Tensor) -> Tensor:`+tc.body) + dd(imageListPy)}
			_, err := Compile(root, nil, srcs(files), "forward")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCompileModuleAttrAssign(t *testing.T) {
	// anchor_utils: self.cell_anchors rebuilt from itself, then read.
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{
		"training": ivalue.FromBool(false),
		"scale":    ivalue.FromDouble(2),
		"flag":     ivalue.FromBool(false),
	}}
	files := map[string]string{
		"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				scale : float
				flag : bool
				def forward(self: __torch__.m.M, x: Tensor) -> Tensor:
					self.scale = torch.mul(self.scale, 3.)
					if torch.gt(torch.numel(x), 100):
						self.flag = True
					else:
						pass
					return torch.mul(x, self.scale)
		`),
	}
	x := ivalue.F32Tensor([]float32{1, -2}, 2)
	_, out := compileRun(t, root, files, ivalue.FromTensor(x))
	assert.Equal(t, []float32{6, -12}, out[0].Tensor().F32())
}

func TestCompileToListIsinstanceDefaults(t *testing.T) {
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
	files := map[string]string{
		"code/__torch__/m.py": dd(`
			class M(Module):
				training : bool
				def forward(self: __torch__.m.M, x: Tensor, t: Optional[Tensor]=None) -> Tuple[List[float], bool, bool, bool]:
					l = annotate(List[float], torch.mul(x, 2).tolist())
					_0 = isinstance(l, (list, tuple))
					_1 = isinstance(x, (list, tuple))
					return (l, _0, _1, torch.__is__(t, None))
		`),
	}
	for k, v := range files {
		files[k] = dd(v)
	}
	res, err := Compile(root, nil, srcs(files), "forward")
	require.NoError(t, err)
	assert.Contains(t, res.Graph.String(), "prim::tolist")
	require.Len(t, res.Graph.InputDefaults, 2)
	assert.Nil(t, res.Graph.InputDefaults[0])
	require.NotNil(t, res.Graph.InputDefaults[1])
	assert.True(t, res.Graph.InputDefaults[1].IsNone())
	sm, err := staticruntime.NewStaticModule(res.Graph, nil)
	require.NoError(t, err)
	// t left out: its default None is used.
	out, err := sm.NewRuntime().Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2.5}, 2)))
	require.NoError(t, err)
	items := out[0].List().Items
	l := items[0].List().Items
	require.Len(t, l, 2)
	assert.Equal(t, 2.0, l[0].AsFloat())
	assert.Equal(t, -5.0, l[1].AsFloat())
	assert.True(t, items[1].Bool())
	assert.False(t, items[2].Bool())
	assert.True(t, items[3].Bool())
}
