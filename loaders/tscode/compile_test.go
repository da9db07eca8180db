package tscode

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// obj is a module object as data.pkl would give it.
type obj struct {
	class string
	attrs map[string]ivalue.IValue
}

func (o *obj) ClassName() string { return o.class }
func (o *obj) GetAttr(n string) (ivalue.IValue, bool) {
	v, ok := o.attrs[n]
	return v, ok
}

func srcs(files map[string]string) Sources {
	return func(entry string) ([]byte, error) {
		s, ok := files[entry]
		if !ok {
			return nil, fmt.Errorf("%s: %w", entry, fs.ErrNotExist)
		}
		return []byte(s), nil
	}
}

func dedent(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	ind := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if ind < 0 || n < ind {
			ind = n
		}
	}
	for i, l := range lines {
		if len(l) >= ind {
			lines[i] = strings.ReplaceAll(l[ind:], "\t", "  ")
		}
	}
	return strings.Join(lines, "\n")
}

func linear(w, b *ivalue.Tensor) *obj {
	return &obj{class: "__torch__.torch.nn.modules.linear.Linear", attrs: map[string]ivalue.IValue{
		"weight": ivalue.FromTensor(w), "bias": ivalue.FromTensor(b), "training": ivalue.FromBool(false),
	}}
}

const linearPy = `
class Linear(Module):
	__parameters__ = ["weight", "bias", ]
	__buffers__ = []
	weight : Tensor
	bias : Tensor
	training : bool
	in_features : Final[int] = 2
	def forward(self: __torch__.torch.nn.modules.linear.Linear,
		input: Tensor) -> Tensor:
		weight = self.weight
		bias = self.bias
		return torch.linear(input, weight, bias)
`

func TestCompileRuns(t *testing.T) {
	w := ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	b := ivalue.F32Tensor([]float32{0.5, -0.5}, 2)
	cases := []struct {
		name  string
		root  string
		args  []ivalue.IValue
		want  []float32
		graph []string // substrings the compiled graph must contain
		not   []string
	}{
		{name: "inline submodule and function, fold training", root: `
			class M(Module):
				training : bool
				fc : __torch__.torch.nn.modules.linear.Linear
				def forward(self: __torch__.M, x: Tensor) -> Tensor:
					fc = self.fc
					h = __torch__.relu((fc).forward(x, ), False, )
					training = self.training
					if training:
						h0 = torch.add_(h, 1)
					else:
						h0 = torch.mul(h, 2.)
					return h0
			def relu(input: Tensor, inplace: bool=False) -> Tensor:
				if inplace:
					result = torch.relu_(input)
				else:
					result = torch.relu(input)
				return result
			`, args: []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -1}, 1, 2))},
			want: []float32{0, 0}, graph: []string{"aten::linear", "aten::relu(", "aten::mul"}, not: []string{"prim::If", "relu_", "GetAttr"}},
		{name: "loop with carried value and runtime if", root: `
			class M(Module):
				training : bool
				fc : __torch__.torch.nn.modules.linear.Linear
				def forward(self: __torch__.M, x: Tensor) -> Tensor:
					h = (self.fc).forward(x, )
					h0 = h
					for i in range(3):
						if torch.gt(i, 0):
							h1 = torch.add(h0, 1.)
						else:
							h1 = h0
						h0 = h1
					if bool(torch.gt(torch.sum(h0), 0)):
						out = h0
					else:
						ops.prim.RaiseException("negative", "builtins.ValueError")
					return out
			`, args: []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 1}, 1, 2))},
			want: []float32{5.5, 8.5}, graph: []string{"prim::Loop", "prim::If", "prim::RaiseException"}},
		{name: "tuples, lists, constants", root: `
			class M(Module):
				training : bool
				fc : __torch__.torch.nn.modules.linear.Linear
				def forward(self: __torch__.M, x: Tensor) -> Tensor:
					_0 = (torch.relu(x), torch.neg(x))
					a, b = _0
					sizes = annotate(List[int], [])
					for _1 in range(torch.dim(x)):
						_2 = torch.append(sizes, torch.size(x, _1))
					y = torch.view(torch.cat([a, b], 1), [sizes[0], -1])
					z = torch.sum(y, [1], True, dtype=None)
					return torch.add(z, CONSTANTS.c0, alpha=self.fc.in_features)
			`, args: []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2}, 1, 2))},
			want: []float32{4}, graph: []string{"aten::cat", "aten::append"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"code/__torch__.py":                         dedent(tc.root),
				"code/__torch__/torch/nn/modules/linear.py": dedent(linearPy),
			}
			root := &obj{class: "__torch__.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false), "fc": ivalue.Object(linear(w, b))}}
			res, err := Compile(root, []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1}))}, srcs(files), "forward")
			require.NoError(t, err)
			text := res.Graph.String()
			for _, s := range tc.graph {
				assert.Contains(t, text, s)
			}
			for _, s := range tc.not {
				assert.NotContains(t, text, s)
			}
			sm, err := staticruntime.NewStaticModule(res.Graph, nil)
			require.NoError(t, err, text)
			out, err := sm.NewRuntime().Run(tc.args...)
			require.NoError(t, err, text)
			got := out[0].Tensor().Float64s()
			require.Len(t, got, len(tc.want), text)
			for i := range got {
				assert.InDelta(t, tc.want[i], got[i], 1e-6, text)
			}
		})
	}
}
