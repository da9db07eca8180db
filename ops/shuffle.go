package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::pixel_shuffle, aten::pixel_unshuffle and aten::channel_shuffle
// (and native_channel_shuffle): each is a permutation of the input seen
// as a strided view (channels split into factors), copied into the
// contiguous output by the strided copy engine; any dtype, any strides.

func init() {
	reg := func(op, schema string, k func(p *ProcessedNode, st *shuffleState) error) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error {
				st, _ := p.State.(*shuffleState)
				if st == nil {
					st = &shuffleState{}
					p.State = st
				}
				return k(p, st)
			}
		})
	}
	reg("aten::pixel_shuffle", "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", pixelShuffleKernel)
	reg("aten::pixel_unshuffle", "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", pixelUnshuffleKernel)
	reg("aten::channel_shuffle", "aten::channel_shuffle(Tensor self, int groups) -> Tensor", channelShuffleKernel)
	reg("aten::native_channel_shuffle", "aten::native_channel_shuffle(Tensor self, int groups) -> Tensor", channelShuffleKernel)
}

type shuffleState struct {
	view           ivalue.Tensor
	sizes, strides []int
	shape          []int
}

// shuffleCopy resizes output 0 to shape and copies the view of x with
// st.sizes and st.strides into it.
func shuffleCopy(p *ProcessedNode, st *shuffleState, x *ivalue.Tensor) {
	o := p.OutTensor(0)
	o.Resize(x.DType(), st.shape)
	if o.Numel() == 0 {
		return
	}
	st.view.SetView(x, x.Offset(), st.sizes, st.strides)
	copyStrided(o, &st.view)
}

func shuffleInput(p *ProcessedNode, op string, minDim int) (*ivalue.Tensor, int, error) {
	x := p.Tensor(0)
	if x == nil {
		return nil, 0, Errorf("%s: expected a tensor input", op)
	}
	if x.Dim() < minDim {
		return nil, 0, Errorf("%s expects input to have at least %d dimensions, but got input with sizes %v", op, minDim, x.Sizes())
	}
	return x, int(p.Int(1)), nil
}

func pixelShuffleKernel(p *ProcessedNode, st *shuffleState) error {
	x, r, err := shuffleInput(p, "pixel_shuffle", 3)
	if err != nil {
		return err
	}
	nd := x.Dim()
	sz, xs := x.Sizes(), x.Strides()
	c, h, w := sz[nd-3], sz[nd-2], sz[nd-1]
	if r <= 0 {
		return Errorf("pixel_shuffle expects a positive upscale_factor, but got %d", r)
	}
	if c%(r*r) != 0 {
		return Errorf("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=%d is not divisible by %d", c, r*r)
	}
	sC, sH, sW := xs[nd-3], xs[nd-2], xs[nd-1]
	// out[..., c, h*r+i, w*r+j] = in[..., c*r*r + i*r + j, h, w]
	st.sizes = append(append(st.sizes[:0], sz[:nd-3]...), c/(r*r), h, r, w, r)
	st.strides = append(append(st.strides[:0], xs[:nd-3]...), sC*r*r, sH, sC*r, sW, sC)
	st.shape = append(append(st.shape[:0], sz[:nd-3]...), c/(r*r), h*r, w*r)
	shuffleCopy(p, st, x)
	return nil
}

func pixelUnshuffleKernel(p *ProcessedNode, st *shuffleState) error {
	x, r, err := shuffleInput(p, "pixel_unshuffle", 3)
	if err != nil {
		return err
	}
	nd := x.Dim()
	sz, xs := x.Sizes(), x.Strides()
	c, h, w := sz[nd-3], sz[nd-2], sz[nd-1]
	if r <= 0 {
		return Errorf("pixel_unshuffle expects a positive downscale_factor, but got %d", r)
	}
	// PyTorch's messages, which check the width first.
	if w%r != 0 {
		return Errorf("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%d is not divisible by %d", w, r)
	}
	if h%r != 0 {
		return Errorf("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%d is not divisible by %d", h, r)
	}
	sC, sH, sW := xs[nd-3], xs[nd-2], xs[nd-1]
	// out[..., c*r*r + i*r + j, h, w] = in[..., c, h*r+i, w*r+j]
	st.sizes = append(append(st.sizes[:0], sz[:nd-3]...), c, r, r, h/r, w/r)
	st.strides = append(append(st.strides[:0], xs[:nd-3]...), sC, sH, sW, sH*r, sW*r)
	st.shape = append(append(st.shape[:0], sz[:nd-3]...), c*r*r, h/r, w/r)
	shuffleCopy(p, st, x)
	return nil
}

func channelShuffleKernel(p *ProcessedNode, st *shuffleState) error {
	x, g, err := shuffleInput(p, "channel_shuffle", 3)
	if err != nil {
		return err
	}
	sz, xs := x.Sizes(), x.Strides()
	c := sz[1]
	if g <= 0 {
		return Errorf("channel_shuffle: number of groups to divide channels in must be positive, got %d", g)
	}
	if c%g != 0 {
		return Errorf("channel_shuffle: number of channels %d must be divisible by groups %d", c, g)
	}
	k := c / g
	// out[n, a*g + b, ...] = in[n, b*k + a, ...]
	st.sizes = append(append(st.sizes[:0], sz[0], k, g), sz[2:]...)
	st.strides = append(append(st.strides[:0], xs[0], xs[1], xs[1]*k), xs[2:]...)
	st.shape = append(st.shape[:0], sz...)
	shuffleCopy(p, st, x)
	return nil
}
