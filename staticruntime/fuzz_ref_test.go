package staticruntime_test

import (
	"fmt"
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
)

// refTensor is a float32 tensor of the reference, held as float64 values
// rounded to float32 after every op, as the kernels store them.
type refTensor struct {
	sizes []int
	data  []float64
}

// refGraph computes a graph made only of aten::linear, aten::relu and
// aten::mul on float32 tensors, for FuzzRunInputs: a few obviously right
// lines to compare the kernels with on shapes PyTorch never recorded.
type refGraph struct {
	g *graph.Graph
}

// newRefGraph returns nil unless every node is one eval computes and
// every graph input is a tensor.
func newRefGraph(g *graph.Graph) *refGraph {
	for _, v := range g.Inputs() {
		if v.Type.Kind != graph.TensorType {
			return nil
		}
	}
	ok := true
	g.Walk(func(n *graph.Node) {
		switch n.Kind {
		case "prim::Constant", "aten::relu":
		case "aten::linear":
			ok = ok && len(n.Inputs) == 3
		case "aten::mul":
			ok = ok && len(n.Inputs) == 2 && n.Inputs[1].Type.Kind == graph.TensorType
		default:
			ok = false
		}
		ok = ok && len(n.Blocks) == 0
	})
	if !ok {
		return nil
	}
	return &refGraph{g: g}
}

// eval computes the graph's outputs. known is false when an input is
// not float32 (the reference does not do type promotion); valid is false
// when the inputs do not fit the graph (a shape PyTorch would refuse).
func (rg *refGraph) eval(in []*refTensor) (out []*refTensor, valid, known bool) {
	vals := map[*graph.Value]*refTensor{}
	for i, v := range rg.g.Inputs() {
		if in[i] == nil {
			return nil, false, false
		}
		vals[v] = in[i]
	}
	tensorArg := func(v *graph.Value) (*refTensor, bool) {
		if t, ok := vals[v]; ok {
			return t, true
		}
		c, ok := graph.ConstantValue(v)
		if !ok || c.Tensor() == nil || c.Tensor().DType() != ivalue.Float32 {
			return nil, false
		}
		t := &refTensor{sizes: c.Tensor().Sizes(), data: c.Tensor().Float64s()}
		vals[v] = t
		return t, true
	}
	for _, n := range rg.g.Block.Nodes {
		var res *refTensor
		switch n.Kind {
		case "prim::Constant":
			continue
		case "aten::relu":
			x, ok := tensorArg(n.Inputs[0])
			if !ok {
				return nil, false, false
			}
			res = &refTensor{sizes: x.sizes, data: make([]float64, len(x.data))}
			for i, v := range x.data {
				res.data[i] = math.Max(v, 0)
			}
		case "aten::mul":
			a, okA := tensorArg(n.Inputs[0])
			b, okB := tensorArg(n.Inputs[1])
			if !okA || !okB {
				return nil, false, false
			}
			var ok bool
			if res, ok = refMul(a, b); !ok {
				return nil, false, true
			}
		case "aten::linear":
			x, okX := tensorArg(n.Inputs[0])
			w, okW := tensorArg(n.Inputs[1])
			if !okX || !okW {
				return nil, false, false
			}
			var b *refTensor
			if c, isConst := graph.ConstantValue(n.Inputs[2]); !isConst || !c.IsNone() {
				var ok bool
				if b, ok = tensorArg(n.Inputs[2]); !ok {
					return nil, false, false
				}
			}
			var ok bool
			if res, ok = refLinear(x, w, b); !ok {
				return nil, false, true
			}
		}
		vals[n.Outputs[0]] = res
	}
	for _, v := range rg.g.Outputs() {
		t, ok := vals[v]
		if !ok {
			return nil, false, false
		}
		out = append(out, t)
	}
	return out, true, true
}

func round32(v float64) float64 { return float64(float32(v)) }

// refMul is a*b with NumPy's broadcasting; false when the shapes do not
// broadcast.
func refMul(a, b *refTensor) (*refTensor, bool) {
	nd := max(len(a.sizes), len(b.sizes))
	sizes := make([]int, nd)
	for k := range nd {
		da, db := dimFromRight(a.sizes, nd-1-k), dimFromRight(b.sizes, nd-1-k)
		switch {
		case da == db || db == 1:
			sizes[k] = da
		case da == 1:
			sizes[k] = db
		default:
			return nil, false
		}
	}
	out := &refTensor{sizes: sizes, data: make([]float64, numel(sizes))}
	idx := make([]int, nd)
	for i := range out.data {
		rem := i
		for k := nd - 1; k >= 0; k-- {
			idx[k] = rem % sizes[k]
			rem /= sizes[k]
		}
		out.data[i] = round32(a.data[broadcastIndex(a.sizes, idx)] * b.data[broadcastIndex(b.sizes, idx)])
	}
	return out, true
}

// dimFromRight is sizes[len-1-k], or 1 past the front.
func dimFromRight(sizes []int, k int) int {
	if k >= len(sizes) {
		return 1
	}
	return sizes[len(sizes)-1-k]
}

// broadcastIndex is the flat index in a tensor of sizes of the output
// index idx (right-aligned; size-1 dims read index 0).
func broadcastIndex(sizes, idx []int) int {
	off := len(idx) - len(sizes)
	flat := 0
	for d, s := range sizes {
		i := idx[off+d]
		if s == 1 {
			i = 0
		}
		flat = flat*s + i
	}
	return flat
}

// refLinear is x @ w.T + b over x's last dim; false unless x has at
// least one dim and its last is w's second.
func refLinear(x, w, b *refTensor) (*refTensor, bool) {
	if len(x.sizes) == 0 || len(w.sizes) != 2 || x.sizes[len(x.sizes)-1] != w.sizes[1] {
		return nil, false
	}
	n, k := w.sizes[0], w.sizes[1]
	rows := numel(x.sizes[:len(x.sizes)-1])
	sizes := append(append([]int(nil), x.sizes[:len(x.sizes)-1]...), n)
	out := &refTensor{sizes: sizes, data: make([]float64, rows*n)}
	for r := range rows {
		for j := range n {
			s := 0.0
			if b != nil {
				s = b.data[j]
			}
			for q := range k {
				s += x.data[r*k+q] * w.data[j*k+q]
			}
			out.data[r*n+j] = round32(s)
		}
	}
	return out, true
}

// compareRef checks float32 outputs against the reference within a
// tolerance for the kernels' float32 accumulation.
func compareRef(outs []ivalue.IValue, want []*refTensor) string {
	got := fixture.Flatten(outs)
	if len(got) != len(want) {
		return fmt.Sprintf("%d output tensors, want %d", len(got), len(want))
	}
	for i, w := range want {
		exp := ivalue.NewTensor(ivalue.Float32, w.sizes...)
		for k, v := range w.data {
			exp.F32()[k] = float32(v)
		}
		if err := fixture.Compare(got[i], exp, 1e-4, 1e-4); err != nil {
			return fmt.Sprintf("output %d: %v", i, err)
		}
	}
	return ""
}
