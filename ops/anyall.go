package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::any / aten::all of a tensor, whole or along one dim: bool output
// (uint8 input gives uint8, as PyTorch); NaN counts as true.

type anyAllState struct {
	src   *ivalue.Tensor
	sizes []int
}

func init() {
	for _, op := range []struct {
		name string
		all  bool
	}{{"any", false}, {"all", true}} {
		RegisterOut("aten::"+op.name, func(n *graph.Node) Kernel {
			switch {
			case n.Matches("aten::" + op.name + "(Tensor self) -> Tensor"):
				return anyAllKernel(op.all, false)
			case n.Matches("aten::" + op.name + ".dim(Tensor self, int dim, bool keepdim=False) -> Tensor"):
				return anyAllKernel(op.all, true)
			}
			return nil
		})
	}
}

func anyAllKernel(all, dim bool) Kernel {
	return func(p *ProcessedNode) error {
		x := p.Tensor(0)
		if x == nil {
			return Errorf("expected a tensor, got %s", p.Input(0).Kind())
		}
		st, _ := p.State.(*anyAllState)
		if st == nil {
			st = &anyAllState{src: &ivalue.Tensor{}}
			p.State = st
		}
		odt := ivalue.Bool
		if x.DType() == ivalue.Uint8 {
			odt = ivalue.Uint8
		}
		// Truth values of x, contiguous.
		st.src.Resize(ivalue.Bool, x.Sizes())
		if err := CastInto(st.src, x); err != nil {
			return err
		}
		b := st.src.BContig()
		outer, n, inner := 1, x.Numel(), 1
		nd := x.Dim()
		st.sizes = st.sizes[:0]
		if dim {
			d := 0
			if nd > 0 {
				w, err := ewWrapDim(p.Int(1), nd)
				if err != nil {
					return err
				}
				d = w
			}
			keep := p.Bool(2)
			outer, n, inner = 1, 1, 1
			for i := 0; i < nd; i++ {
				switch {
				case i < d:
					outer *= x.Size(i)
				case i == d:
					n = x.Size(i)
				default:
					inner *= x.Size(i)
				}
				if i != d {
					st.sizes = append(st.sizes, x.Size(i))
				} else if keep {
					st.sizes = append(st.sizes, 1)
				}
			}
		}
		out := p.OutTensor(0)
		out.Resize(odt, st.sizes)
		for o := 0; o < outer; o++ {
			for in := 0; in < inner; in++ {
				r := all
				for j := 0; j < n; j++ {
					if b[(o*n+j)*inner+in] != all {
						r = !all
						break
					}
				}
				i := o*inner + in
				if odt == ivalue.Uint8 {
					v := uint8(0)
					if r {
						v = 1
					}
					out.U8Contig()[i] = v
				} else {
					out.BContig()[i] = r
				}
			}
		}
		return nil
	}
}
