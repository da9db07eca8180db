package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::im2col (F.unfold) and aten::col2im (F.fold) on float32, batched
// or not. col2im sums blocks back through conv_transpose.go's col2imAdd.

const (
	im2colSchema = "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor"
	col2imSchema = "aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor"
)

func init() {
	RegisterOut("aten::im2col", func(n *graph.Node) Kernel {
		if !n.Matches(im2colSchema) {
			return nil
		}
		return im2colKernel
	})
	RegisterOut("aten::col2im", func(n *graph.Node) Kernel {
		if !n.Matches(col2imSchema) {
			return nil
		}
		return col2imKernel
	})
}

type foldState struct {
	ints  []int
	shape []int
	cols  []float32 // col2im: a contiguous copy of a strided input
}

// foldParams reads kernel_size, dilation, padding and stride (inputs
// first..first+3) into a col2imGeom's (h, w) entries.
func foldParams(p *ProcessedNode, st *foldState, first int, op string, g *col2imGeom) error {
	vals := [4]*[3]int{&g.k, &g.dil, &g.pad, &g.str}
	names := [4]string{"kernel_size", "dilation", "padding", "stride"}
	for i, v := range vals {
		st.ints = p.IntsInto(first+i, st.ints)
		if len(st.ints) != 2 {
			return Errorf("%s: %s must have 2 values, got %v", op, names[i], st.ints)
		}
		*v = [3]int{1, st.ints[0], st.ints[1]}
	}
	g.pad[0] = 0
	for d := 1; d < 3; d++ {
		if g.k[d] <= 0 || g.dil[d] <= 0 || g.str[d] <= 0 || g.pad[d] < 0 {
			return Errorf("%s: expected positive kernel_size, dilation and stride and non-negative padding, got %v, %v, %v, %v",
				op, foldHW(g.k), foldHW(g.dil), foldHW(g.str), foldHW(g.pad))
		}
	}
	return nil
}

// foldBlocks is the number of sliding blocks along (h, w) of an h x w
// image, or an error when one is not positive.
func foldBlocks(op string, g *col2imGeom, h, w int) (int, int, error) {
	bh := (h+2*g.pad[1]-g.dil[1]*(g.k[1]-1)-1)/g.str[1] + 1
	bw := (w+2*g.pad[2]-g.dil[2]*(g.k[2]-1)-1)/g.str[2] + 1
	if h+2*g.pad[1]-g.dil[1]*(g.k[1]-1)-1 < 0 || w+2*g.pad[2]-g.dil[2]*(g.k[2]-1)-1 < 0 || bh < 1 || bw < 1 {
		return 0, 0, Errorf("%s: given spatial size (%d, %d), kernel_size %v, dilation %v, padding %v and stride %v, the array of sliding blocks would have shape (%d, %d), but its components must be at least one",
			op, h, w, foldHW(g.k), foldHW(g.dil), foldHW(g.pad), foldHW(g.str), bh, bw)
	}
	return bh, bw, nil
}

func foldStateOf(p *ProcessedNode) *foldState {
	st, _ := p.State.(*foldState)
	if st == nil {
		st = &foldState{}
		p.State = st
	}
	return st
}

func im2colKernel(p *ProcessedNode) error {
	st := foldStateOf(p)
	x, err := gemmInput(p, 0, "im2col input")
	if err != nil {
		return err
	}
	if x.Dim() != 3 && x.Dim() != 4 {
		return Errorf("im2col: expected a 3-d or 4-d input, got sizes %v", x.Sizes())
	}
	var g col2imGeom
	if err := foldParams(p, st, 1, "im2col", &g); err != nil {
		return err
	}
	sz, xs := x.Sizes(), x.Strides()
	lead, n, sN := 0, 1, 0
	if x.Dim() == 4 {
		lead, n, sN = 1, sz[0], xs[0]
	}
	c, h, w := sz[lead], sz[lead+1], sz[lead+2]
	sC, sH, sW := xs[lead], xs[lead+1], xs[lead+2]
	if h == 0 || w == 0 {
		return Errorf("im2col: expected non-empty spatial dims, got sizes %v", sz)
	}
	bh, bw, err := foldBlocks("im2col", &g, h, w)
	if err != nil {
		return err
	}
	st.shape = st.shape[:0]
	if lead == 1 {
		st.shape = append(st.shape, n)
	}
	st.shape = append(st.shape, c*g.k[1]*g.k[2], bh*bw)
	o := p.OutTensor(0)
	o.Resize(ivalue.Float32, st.shape)
	out := o.F32Contig()
	xd := x.F32()
	L := bh * bw
	row := 0
	for nn := 0; nn < n; nn++ {
		for cc := 0; cc < c; cc++ {
			plane := x.Offset() + nn*sN + cc*sC
			for ki := 0; ki < g.k[1]; ki++ {
				for kj := 0; kj < g.k[2]; kj++ {
					dst := out[row*L : (row+1)*L]
					row++
					dw := kj*g.dil[2] - g.pad[2]
					lo, hi := col2imRange(dw, g.str[2], bw, w)
					for oh := 0; oh < bh; oh++ {
						r := dst[oh*bw : (oh+1)*bw]
						ih := oh*g.str[1] - g.pad[1] + ki*g.dil[1]
						if uint(ih) >= uint(h) {
							clear(r)
							continue
						}
						clear(r[:lo])
						clear(r[hi:])
						src := plane + ih*sH + (lo*g.str[2]+dw)*sW
						step := g.str[2] * sW
						for t := range r[lo:hi] {
							r[lo+t] = xd[src+t*step]
						}
					}
				}
			}
		}
	}
	return nil
}

func col2imKernel(p *ProcessedNode) error {
	st := foldStateOf(p)
	x, err := gemmInput(p, 0, "col2im input")
	if err != nil {
		return err
	}
	if x.Dim() != 2 && x.Dim() != 3 {
		return Errorf("col2im: expected a 2-d or 3-d input, got sizes %v", x.Sizes())
	}
	st.ints = p.IntsInto(1, st.ints)
	if len(st.ints) != 2 {
		return Errorf("col2im: output_size must have 2 values, got %v", st.ints)
	}
	h, w := st.ints[0], st.ints[1]
	var g col2imGeom
	if err := foldParams(p, st, 2, "col2im", &g); err != nil {
		return err
	}
	bh, bw, err := foldBlocks("col2im", &g, h, w)
	if err != nil {
		return err
	}
	sz := x.Sizes()
	lead, n := 0, 1
	if x.Dim() == 3 {
		lead, n = 1, sz[0]
	}
	taps := g.k[1] * g.k[2]
	if sz[lead] == 0 || sz[lead]%taps != 0 {
		return Errorf("col2im: expected size of input's dimension %d to be divisible by the product of kernel_size (%d), got sizes %v", lead, taps, sz)
	}
	if sz[lead+1] != bh*bw {
		return Errorf("col2im: given output_size (%d, %d), kernel_size %v, dilation %v, padding %v and stride %v, expected size of input's dimension %d to match the calculated number of sliding blocks %d * %d = %d, got %d",
			h, w, foldHW(g.k), foldHW(g.dil), foldHW(g.pad), foldHW(g.str), lead+1, bh, bw, bh*bw, sz[lead+1])
	}
	c := sz[lead] / taps
	st.shape = st.shape[:0]
	if lead == 1 {
		st.shape = append(st.shape, n)
	}
	st.shape = append(st.shape, c, h, w)
	o := p.OutTensor(0)
	o.Resize(ivalue.Float32, st.shape)
	out := o.F32Contig()
	clear(out)
	if len(out) == 0 {
		return nil
	}
	cols, off := x.F32(), x.Offset()
	if !x.IsContiguous() {
		if cap(st.cols) < x.Numel() {
			st.cols = make([]float32, x.Numel())
		}
		cols, off = st.cols[:x.Numel()], 0
		gemmCopyContig(cols, x)
	}
	g.in, g.out = [3]int{1, bh, bw}, [3]int{1, h, w}
	per := sz[lead] * sz[lead+1]
	for nn := 0; nn < n; nn++ {
		col2imAdd(&g, cols[off+nn*per:off+(nn+1)*per], c, out[nn*c*h*w:(nn+1)*c*h*w])
	}
	return nil
}

// foldHW is the (h, w) part of a geometry triple, for messages.
func foldHW(a [3]int) [2]int { return [2]int{a[1], a[2]} }
