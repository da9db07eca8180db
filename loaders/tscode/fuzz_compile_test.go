package tscode

import (
	"strings"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// FuzzCompile compiles arbitrary code as the root module's source: any
// input must give a graph the runtime accepts or an error with a position,
// never a panic or an internal error.
func FuzzCompile(f *testing.F) {
	seeds := []string{
		"class M(Module):\n  fc : __torch__.torch.nn.modules.linear.Linear\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    return (self.fc).forward(x, )\n",
		"class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    y = x\n    for i in range(3):\n      if torch.gt(i, 1):\n        y = torch.add(y, x)\n      else:\n        y = torch.mul(y, 2.)\n    return y\n",
		"class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tuple[Tensor, int]:\n    a, b = (x, torch.dim(x))\n    l = annotate(List[int], [])\n    _0 = torch.append(l, b)\n    return (torch.view(a, [-1]), l[0])\n",
		"class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    if bool(torch.gt(torch.sum(x), 0)):\n      z = x\n    else:\n      ops.prim.RaiseException(\"no\", \"builtins.ValueError\")\n    return z\n",
	}
	// Long chains compile in loops (the constant ones fold); too deep
	// nesting is an error.
	const fwd = "class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n"
	seeds = append(seeds,
		fwd+"    n = "+strings.TrimSuffix(strings.Repeat("1 + ", 5_000), " + ")+"\n    return torch.add(x, n)\n",
		fwd+"    b = "+strings.TrimSuffix(strings.Repeat("True and ", 5_000), " and ")+"\n    return torch.mul(x, b)\n",
		fwd+"    y = x\n    if False:\n      y = x\n"+strings.Repeat("    elif False:\n      y = x\n", 5000)+"    else:\n      y = torch.relu(x)\n    return y\n",
		fwd+"    return "+strings.TrimSuffix(strings.Repeat("x + ", 300), " + ")+"\n",
		fwd+"    return x"+strings.Repeat(".relu()", 300)+"\n",
		fwd+"    return "+strings.Repeat("torch.relu(", 600)+"x"+strings.Repeat(")", 600)+"\n",
	)
	for _, s := range seeds {
		f.Add(s)
	}
	w := ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	b := ivalue.F32Tensor([]float32{0.5, -0.5}, 2)
	f.Fuzz(func(t *testing.T, src string) {
		files := map[string]string{
			"code/__torch__.py":                         src,
			"code/__torch__/torch/nn/modules/linear.py": dedent(linearPy),
		}
		root := &obj{class: "__torch__.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false), "fc": ivalue.Object(linear(w, b))}}
		res, err := Compile(root, nil, srcs(files), "forward")
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%v\n%s", err, src)
			}
			return
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("NewStaticModule panicked: %v\n%s", r, res.Graph)
				}
			}()
			staticruntime.NewStaticModule(res.Graph, nil)
		}()
	})
}
