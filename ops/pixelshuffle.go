package ops

import "github.com/gosr/gosr/graph"

// aten::pixel_shuffle and aten::pixel_unshuffle, any dtype: each is a
// reshape-permute-reshape, done as one strided copy (copy.go's copyND)
// from the input, with any strides, into the contiguous output. The
// innermost copy dimension is the input's (shuffle) or the output's
// (unshuffle) width, contiguous on one side.

const (
	pixelShuffleSchema   = "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor"
	pixelUnshuffleSchema = "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor"
)

func init() {
	RegisterOut("aten::pixel_shuffle", func(n *graph.Node) Kernel {
		if n.Matches(pixelShuffleSchema) {
			return func(p *ProcessedNode) error { return pixelShuffle(p, false) }
		}
		return nil
	})
	RegisterOut("aten::pixel_unshuffle", func(n *graph.Node) Kernel {
		if n.Matches(pixelUnshuffleSchema) {
			return func(p *ProcessedNode) error { return pixelShuffle(p, true) }
		}
		return nil
	})
}

// pixelMaxBatch is the number of leading dims handled without
// allocating (the copy has batch dims + 5 dims).
const pixelMaxBatch = copyMaxDims - 5

func pixelShuffle(p *ProcessedNode, unshuffle bool) error {
	name := "pixel_shuffle"
	if unshuffle {
		name = "pixel_unshuffle"
	}
	x := p.Tensor(0)
	if x == nil {
		return Errorf("%s: expected a tensor, got %s", name, p.Input(0).Kind())
	}
	nd := x.Dim()
	if nd < 3 {
		return Errorf("%s expects input to have at least 3 dimensions, but got input with %d dimension(s)", name, nd)
	}
	f := int(p.Int(1))
	if f <= 0 {
		what := "upscale_factor"
		if unshuffle {
			what = "downscale_factor"
		}
		return Errorf("%s expects a positive %s, but got %d", name, what, f)
	}
	c, h, w := x.Size(nd-3), x.Size(nd-2), x.Size(nd-1)
	var oc, oh, ow int
	if unshuffle {
		if h%f != 0 {
			return Errorf("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%d is not divisible by %d", h, f)
		}
		if w%f != 0 {
			return Errorf("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%d is not divisible by %d", w, f)
		}
		oc, oh, ow = c*f*f, h/f, w/f
	} else {
		if c%(f*f) != 0 {
			return Errorf("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=%d is not divisible by %d", c, f*f)
		}
		oc, oh, ow = c/(f*f), h*f, w*f
	}
	nb := nd - 3
	var szBuf, dsBuf, ssBuf [copyMaxDims]int
	var osBuf [copyMaxDims]int
	var sizes, ds, ss, osz []int
	if nb <= pixelMaxBatch {
		sizes, ds, ss, osz = szBuf[:nb+5], dsBuf[:nb+5], ssBuf[:nb+5], osBuf[:nd]
	} else {
		sizes, ds, ss, osz = make([]int, nb+5), make([]int, nb+5), make([]int, nb+5), make([]int, nd)
	}
	copy(osz, x.Sizes()[:nb])
	osz[nb], osz[nb+1], osz[nb+2] = oc, oh, ow
	out := p.OutTensor(0)
	out.Resize(x.DType(), osz)
	if out.Numel() == 0 {
		return nil
	}
	xs := x.Strides()
	plane := oc * oh * ow
	for d := nb - 1; d >= 0; d-- {
		sizes[d], ss[d], ds[d] = x.Size(d), xs[d], plane
		plane *= x.Size(d)
	}
	sc, sh, sw := xs[nd-3], xs[nd-2], xs[nd-1]
	b := nb
	if unshuffle {
		// Output [*, oc, f, f, oh, ow] read from input (c, i, j, h, w)
		// at c*sc + (h*f+i)*sh + (w*f+j)*sw.
		sizes[b], ds[b], ss[b] = c, f*f*oh*ow, sc
		sizes[b+1], ds[b+1], ss[b+1] = f, f*oh*ow, sh
		sizes[b+2], ds[b+2], ss[b+2] = f, oh*ow, sw
		sizes[b+3], ds[b+3], ss[b+3] = oh, ow, f*sh
		sizes[b+4], ds[b+4], ss[b+4] = ow, 1, f*sw
	} else {
		// Output [*, oc, h, f, w, f] (dims c, h, i, w, j) read from
		// channel c*f*f + i*f + j at (h, w); copied in the order
		// c, h, i, j, w so that the innermost run reads a contiguous row.
		sizes[b], ds[b], ss[b] = oc, oh*ow, f*f*sc
		sizes[b+1], ds[b+1], ss[b+1] = h, f*ow, sh
		sizes[b+2], ds[b+2], ss[b+2] = f, ow, f*sc
		sizes[b+3], ds[b+3], ss[b+3] = f, 1, sc
		sizes[b+4], ds[b+4], ss[b+4] = w, f, sw
	}
	copyND(out.Storage().Data, out.Offset(), ds, x.Storage().Data, x.Offset(), ss, sizes, x.DType().Size())
	return nil
}
