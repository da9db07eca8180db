package ops_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/ops/gemm"
)

// The attention kernels' values are checked against PyTorch by the attn_
// fixtures (scripts/op_cases_attn.py); these tests cover what fixtures
// cannot hold: PyTorch's errors, its undefined weights, NaN rows, and
// steady runs that allocate nothing.

func attnRand(rng *rand.Rand, scale float32, sizes ...int) *ivalue.Tensor {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(rng.NormFloat64()) * scale
	}
	return ivalue.F32Tensor(d, sizes...)
}

// mhaInputs returns the inputs of _native_multi_head_attention for a
// self-attention of x [B, T, D] with H heads (weights random).
func mhaInputs(rng *rand.Rand, B, T, D, H int, mask ivalue.IValue, needW, avg bool, maskType ivalue.IValue) ([]ivalue.IValue, []*graph.Type) {
	x := iv(attnRand(rng, 1, B, T, D))
	in := []ivalue.IValue{x, x, x, ivI(int64(D)), ivI(int64(H)),
		iv(attnRand(rng, 0.3, 3*D, D)), iv(attnRand(rng, 0.1, 3*D)), iv(attnRand(rng, 0.3, D, D)), iv(attnRand(rng, 0.1, D)),
		mask, ivB(needW), ivB(avg), maskType}
	types := []*graph.Type{tT, tT, tT, tI, tI, tT, tT, tT, tT, attnOptType(mask), tB, tB, attnOptType(maskType)}
	return in, types
}

func attnOptType(v ivalue.IValue) *graph.Type {
	switch {
	case v.IsNone():
		return tN
	case v.IsTensor():
		return tT
	}
	return tI
}

func encoderInputs(rng *rand.Rand, B, T, D, H, F int, gelu, normFirst bool, mask, maskType ivalue.IValue) ([]ivalue.IValue, []*graph.Type) {
	in := []ivalue.IValue{iv(attnRand(rng, 1, B, T, D)), ivI(int64(D)), ivI(int64(H)),
		iv(attnRand(rng, 0.3, 3*D, D)), iv(attnRand(rng, 0.1, 3*D)), iv(attnRand(rng, 0.3, D, D)), iv(attnRand(rng, 0.1, D)),
		ivB(gelu), ivB(normFirst), ivF(1e-5),
		iv(attnRand(rng, 1, D)), iv(attnRand(rng, 1, D)), iv(attnRand(rng, 1, D)), iv(attnRand(rng, 1, D)),
		iv(attnRand(rng, 0.3, F, D)), iv(attnRand(rng, 0.1, F)), iv(attnRand(rng, 0.3, D, F)), iv(attnRand(rng, 0.1, D)),
		mask, maskType}
	types := []*graph.Type{tT, tI, tI, tT, tT, tT, tT, tB, tB, tF, tT, tT, tT, tT, tT, tT, tT, tT, attnOptType(mask), attnOptType(maskType)}
	return in, types
}

func boolMask(sizes []int, set ...int) *ivalue.Tensor {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	d := make([]bool, n)
	for _, i := range set {
		d[i] = true
	}
	return ivalue.BoolTensor(d, sizes...)
}

// TestAttentionErrors: the inputs PyTorch 1.13 rejects on CPU (messages
// as its checks word them; each case was run against torch 1.13).
func TestAttentionErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	none := ivalue.None()
	pad := iv(boolMask([]int{2, 5}, 9))
	mha := func(mask, maskType ivalue.IValue) ([]ivalue.IValue, []*graph.Type) {
		return mhaInputs(rng, 2, 5, 8, 2, mask, true, true, maskType)
	}
	type tc struct {
		name, kind string
		in         []ivalue.IValue
		types      []*graph.Type
		nOut       int
		want       string
	}
	var cases []tc
	add := func(name, kind string, nOut int, want string, in []ivalue.IValue, types []*graph.Type) {
		cases = append(cases, tc{name, kind, in, types, nOut, want})
	}
	const mhaK, encK = "aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd"
	in, ty := mha(pad, ivI(0))
	add("mha src_mask type", mhaK, 2, "src_mask not currently supported on CPU", in, ty)
	in, ty = mha(pad, none)
	add("mha mask without type", mhaK, 2, "Mask Type should be defined", in, ty)
	in, ty = mha(pad, ivI(3))
	add("mha mask type 3", mhaK, 2, "Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask)", in, ty)
	in, ty = mha(iv(boolMask([]int{5, 5})), ivI(1))
	add("mha [T, T] mask", mhaK, 2, "attn_mask->sizes()[0] == batch_size", in, ty)
	in, ty = mha(iv(boolMask([]int{2, 6})), ivI(1))
	add("mha [B, T+1] mask", mhaK, 2, "attn_mask->sizes()[1] == seq_len", in, ty)
	in, ty = mha(iv(boolMask([]int{2, 1, 1, 5})), ivI(1))
	add("mha 4-d mask not [B, H, T, T]", mhaK, 2, "Mask shape should match input shape", in, ty)
	in, ty = mha(iv(boolMask([]int{2, 5, 5})), ivI(1))
	add("mha 3-d mask", mhaK, 2, "Mask shape should match input shape", in, ty)
	in, ty = mha(none, none)
	in[4] = ivI(3)
	add("mha heads do not divide", mhaK, 2, "`embed_dim` must divide evenly by `num_heads`", in, ty)
	in, ty = mha(none, none)
	x2 := iv(attnRand(rng, 1, 5, 8))
	in[0], in[1], in[2] = x2, x2, x2
	add("mha 2-d query", mhaK, 2, "expected 3-D `query`, got 2-D tensor", in, ty)
	in, ty = mha(none, none)
	in[1] = iv(attnRand(rng, 1, 2, 6, 8))
	add("mha key shape", mhaK, 2, "expected `query`/`key`/`value` shapes to match", in, ty)
	in, ty = mha(none, none)
	in[3] = ivI(4)
	add("mha embed_dim", mhaK, 2, "passed-in embed_dim 4 didn't match last dim of query 8", in, ty)
	in, ty = encoderInputs(rng, 2, 5, 8, 2, 16, false, false, pad, ivI(0))
	add("encoder src_mask type", encK, 1, "src_mask not currently supported on CPU", in, ty)
	in, ty = encoderInputs(rng, 2, 5, 8, 2, 16, false, false, pad, none)
	add("encoder mask without type", encK, 1, "Mask Type should be defined", in, ty)
	in, ty = encoderInputs(rng, 2, 5, 8, 2, 16, false, false, iv(boolMask([]int{5, 5})), ivI(0))
	add("encoder [T, T] mask", encK, 1, "attn_mask->sizes()[0] == batch_size", in, ty)

	s := iv(attnRand(rng, 1, 2, 2, 3, 3))
	msTypes := []*graph.Type{tT, tT, tI, tI}
	add("masked_softmax float mask", "aten::_masked_softmax", 1, "Mask should be a boolean tensor",
		[]ivalue.IValue{s, iv(attnRand(rng, 1, 2, 2, 3, 3)), ivI(3), ivI(1)}, msTypes)
	add("masked_softmax mask shape", "aten::_masked_softmax", 1, "Mask shape should match input shape",
		[]ivalue.IValue{s, iv(boolMask([]int{2, 3})), ivI(3), ivI(1)}, msTypes)
	add("masked_softmax src_mask", "aten::_masked_softmax", 1, "src_mask not currently supported on CPU",
		[]ivalue.IValue{s, iv(boolMask([]int{2, 2, 3, 3})), ivI(3), ivI(0)}, msTypes)
	add("masked_softmax no type", "aten::_masked_softmax", 1, "Mask Type should be defined",
		[]ivalue.IValue{s, iv(boolMask([]int{2, 2, 3, 3})), ivI(3), none}, []*graph.Type{tT, tT, tI, tN})
	add("masked_softmax dim", "aten::_masked_softmax", 1, "out of range",
		[]ivalue.IValue{s, iv(boolMask([]int{2, 2, 3, 3})), ivI(4), ivI(1)}, msTypes)

	bTypes := []*graph.Type{tT, tT, tT, tI, tI}
	add("baddbmm inner dims", "aten::baddbmm", 1, "cannot be multiplied",
		[]ivalue.IValue{iv(attnRand(rng, 1, 2, 3, 4)), iv(attnRand(rng, 1, 2, 3, 5)), iv(attnRand(rng, 1, 2, 6, 4)), ivI(1), ivI(1)}, bTypes)
	add("baddbmm self shape", "aten::baddbmm", 1, "broadcastable",
		[]ivalue.IValue{iv(attnRand(rng, 1, 3, 3, 4)), iv(attnRand(rng, 1, 2, 3, 5)), iv(attnRand(rng, 1, 2, 5, 4)), ivI(1), ivI(1)}, bTypes)
	add("baddbmm 2-d batch", "aten::baddbmm", 1, "must be 3-d",
		[]ivalue.IValue{iv(attnRand(rng, 1, 3, 4)), iv(attnRand(rng, 1, 3, 5)), iv(attnRand(rng, 1, 5, 4)), ivI(1), ivI(1)}, bTypes)
	add("addmv sizes", "aten::addmv", 1, "size mismatch",
		[]ivalue.IValue{iv(attnRand(rng, 1, 3)), iv(attnRand(rng, 1, 3, 5)), iv(attnRand(rng, 1, 4)), ivI(1), ivI(1)}, bTypes)

	const sdpaK = "aten::_scaled_dot_product_attention"
	sq := iv(attnRand(rng, 1, 2, 4, 5))
	sdTypes := []*graph.Type{tT, tT, tT, tN, tF, tB, tB}
	add("sdpa dropout", sdpaK, 2, "dropout_p 0.5 > 0", []ivalue.IValue{sq, sq, sq, none, ivF(0.5), ivB(false), ivB(false)}, sdTypes)
	add("sdpa causal with mask", sdpaK, 2, "Explicit attn_mask should not be set when is_causal=True",
		[]ivalue.IValue{sq, sq, sq, iv(boolMask([]int{4, 4})), ivF(0), ivB(false), ivB(true)}, []*graph.Type{tT, tT, tT, tT, tF, tB, tB})
	add("sdpa mask shape", sdpaK, 2, "do not broadcast",
		[]ivalue.IValue{sq, sq, sq, iv(boolMask([]int{3, 4})), ivF(0), ivB(false), ivB(false)}, []*graph.Type{tT, tT, tT, tT, tF, tB, tB})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := make([]*graph.Type, c.nOut)
			for i := range outs {
				outs[i] = tT
			}
			_, _, err := runNode(t, c.kind, c.in, c.types, outs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestAttentionUndefinedWeights: need_weights=False, and an empty input,
// give PyTorch's undefined weights (None), the latter with an output of
// query's (empty) shape.
func TestAttentionUndefinedWeights(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	in, ty := mhaInputs(rng, 2, 5, 8, 2, ivalue.None(), false, true, ivalue.None())
	outs, _, err := runNode(t, "aten::_native_multi_head_attention", in, ty, []*graph.Type{tT, tT})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 5, 8}, outs[0].Tensor().Sizes())
	assert.True(t, outs[1].IsNone())

	in, ty = mhaInputs(rng, 2, 0, 8, 2, ivalue.None(), true, true, ivalue.None())
	outs, _, err = runNode(t, "aten::_native_multi_head_attention", in, ty, []*graph.Type{tT, tT})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0, 8}, outs[0].Tensor().Sizes())
	assert.True(t, outs[1].IsNone())

	in, ty = encoderInputs(rng, 0, 5, 8, 2, 16, true, true, ivalue.None(), ivalue.None())
	outs, _, err = runNode(t, "aten::_transformer_encoder_layer_fwd", in, ty, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 5, 8}, outs[0].Tensor().Sizes())
}

// TestAttentionMaskedRows: a row masked entirely is NaN (1.13's
// host_softmax: 0 times the inverse of a zero sum), in _masked_softmax
// and through the attention (a key padding mask hiding every key of a
// batch makes that batch's output NaN, the other batch finite).
func TestAttentionMaskedRows(t *testing.T) {
	x := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	m := ivalue.BoolTensor([]bool{true, true, true, false, true, false}, 2, 3)
	outs, _, err := runNode(t, "aten::_masked_softmax", []ivalue.IValue{iv(x), iv(m), ivI(1), ivI(1)}, []*graph.Type{tT, tT, tI, tI}, []*graph.Type{tT})
	require.NoError(t, err)
	o := outs[0].Tensor().F32()
	for _, v := range o[:3] {
		assert.True(t, math.IsNaN(float64(v)))
	}
	// Row 2: softmax of 4 and 6 alone.
	e := math.Exp(-2)
	assert.InDeltaSlice(t, []float64{e / (1 + e), 0, 1 / (1 + e)}, []float64{float64(o[3]), float64(o[4]), float64(o[5])}, 1e-6)

	rng := rand.New(rand.NewSource(3))
	pad := boolMask([]int{2, 4}, 4, 5, 6, 7)
	in, ty := mhaInputs(rng, 2, 4, 8, 2, iv(pad), true, true, ivI(1))
	outs, _, err = runNode(t, "aten::_native_multi_head_attention", in, ty, []*graph.Type{tT, tT})
	require.NoError(t, err)
	y := outs[0].Tensor().F32()
	for i, v := range y {
		assert.Equal(t, i >= 32, math.IsNaN(float64(v)), "element %d", i)
	}
}

// TestAttentionNoAllocs: steady runs allocate nothing, with weights
// packed at preparation (constants) or read as inputs.
func TestAttentionNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	pad := iv(boolMask([]int{2, 20}, 19, 38, 39))
	type tc struct {
		name, kind string
		in         []ivalue.IValue
		types      []*graph.Type
		nOut       int
		constFrom  int // inputs from here on, tensors, are constants; -1: none
	}
	var cases []tc
	for _, constW := range []bool{false, true} {
		cf := -1
		if constW {
			cf = 3
		}
		in, ty := mhaInputs(rng, 2, 20, 32, 4, pad, true, true, ivI(1))
		cases = append(cases, tc{"mha pad avg", "aten::_native_multi_head_attention", in, ty, 2, cf})
		in, ty = mhaInputs(rng, 2, 20, 32, 4, ivalue.None(), true, false, ivalue.None())
		cases = append(cases, tc{"mha all weights", "aten::_native_multi_head_attention", in, ty, 2, cf})
		in, ty = mhaInputs(rng, 2, 20, 32, 4, ivalue.None(), false, true, ivalue.None())
		in[1] = iv(attnRand(rng, 1, 2, 20, 32))
		cases = append(cases, tc{"mha cross no weights", "aten::_native_multi_head_attention", in, ty, 2, cf})
		in, ty = encoderInputs(rng, 2, 20, 32, 4, 48, true, true, pad, ivI(1))
		cases = append(cases, tc{"encoder gelu norm_first", "aten::_transformer_encoder_layer_fwd", in, ty, 1, cf})
		in, ty = encoderInputs(rng, 2, 20, 32, 4, 48, false, false, ivalue.None(), ivalue.None())
		cases = append(cases, tc{"encoder relu", "aten::_transformer_encoder_layer_fwd", in, ty, 1, cf})
	}
	cases = append(cases,
		tc{"masked_softmax", "aten::_masked_softmax", []ivalue.IValue{iv(attnRand(rng, 1, 2, 3, 4, 5)), iv(boolMask([]int{2, 3, 4, 5}, 3, 7)), ivI(2), ivI(2)},
			[]*graph.Type{tT, tT, tI, tI}, 1, -1},
		tc{"baddbmm", "aten::baddbmm", []ivalue.IValue{iv(attnRand(rng, 1, 1, 20, 20)), iv(attnRand(rng, 1, 8, 20, 16)), iv(attnRand(rng, 1, 8, 16, 20)), ivF(0.5), ivI(1)},
			[]*graph.Type{tT, tT, tT, tF, tI}, 1, -1},
		tc{"sdpa causal", "aten::_scaled_dot_product_attention", []ivalue.IValue{iv(attnRand(rng, 1, 2, 3, 10, 8)), iv(attnRand(rng, 1, 2, 3, 10, 8)), iv(attnRand(rng, 1, 2, 3, 10, 8)), ivalue.None(), ivF(0), ivB(true), ivB(true)},
			[]*graph.Type{tT, tT, tT, tN, tF, tB, tB}, 2, -1},
		tc{"sdpa mask", "aten::_scaled_dot_product_attention", []ivalue.IValue{iv(attnRand(rng, 1, 2, 3, 10, 8)), iv(attnRand(rng, 1, 2, 3, 12, 8)), iv(attnRand(rng, 1, 2, 3, 12, 8)), iv(boolMask([]int{10, 12}, 3)), ivF(0), ivB(true), ivB(false)},
			[]*graph.Type{tT, tT, tT, tT, tF, tB, tB}, 2, -1},
		tc{"transform_bias_rescale_qkv", "aten::_transform_bias_rescale_qkv", []ivalue.IValue{iv(attnRand(rng, 1, 2, 5, 24)), iv(attnRand(rng, 1, 24)), ivI(2)},
			[]*graph.Type{tT, tT, tI}, 3, -1},
	)
	for _, c := range cases {
		name := c.name
		if c.constFrom >= 0 {
			name += " const weights"
		}
		t.Run(name, func(t *testing.T) {
			constant := make([]bool, len(c.in))
			for i, v := range c.in {
				constant[i] = !v.IsTensor() || (c.constFrom >= 0 && i >= c.constFrom)
			}
			outs := make([]*graph.Type, c.nOut)
			for i := range outs {
				outs[i] = tT
			}
			p, err := buildNode(t, c.kind, c.in, c.types, outs, constant)
			require.NoError(t, err)
			require.Equal(t, ops.OutVariant, p.Kind)
			require.NoError(t, p.Run())
			assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Run() }))
		})
	}
}

// attnBenchShapes are ViT-like: 197 tokens (a 224 image in 16-pixel
// patches, plus the class token) at ViT-Ti width, and vit_b_16's width
// at 50 tokens (a 112 image).
var attnBenchShapes = []struct {
	name          string
	B, T, D, H, F int
}{
	{"vit_ti_T197_D192_H3", 1, 197, 192, 3, 768},
	{"vit_b_T50_D768_H12", 1, 50, 768, 12, 3072},
	{"vit_b_16_T197_D768_H12", 1, 197, 768, 12, 3072},
}

// BenchmarkNativeMHA is _native_multi_head_attention as a frozen vit
// runs it: self-attention, constant weights, need_weights=False.
// scripts/bench_attn.py times the same in PyTorch.
func BenchmarkNativeMHA(b *testing.B) {
	for _, s := range attnBenchShapes {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewSource(5))
			in, ty := mhaInputs(rng, s.B, s.T, s.D, s.H, ivalue.None(), false, true, ivalue.None())
			attnBench(b, "aten::_native_multi_head_attention", in, ty, 2)
		})
	}
}

// BenchmarkEncoderLayer is _transformer_encoder_layer_fwd (gelu,
// norm_first, as a ViT block) with constant weights.
func BenchmarkEncoderLayer(b *testing.B) {
	for _, s := range attnBenchShapes {
		b.Run(s.name, func(b *testing.B) {
			rng := rand.New(rand.NewSource(6))
			in, ty := encoderInputs(rng, s.B, s.T, s.D, s.H, s.F, true, true, ivalue.None(), ivalue.None())
			attnBench(b, "aten::_transformer_encoder_layer_fwd", in, ty, 1)
		})
	}
}

func attnBench(b *testing.B, kind string, in []ivalue.IValue, ty []*graph.Type, nOut int) {
	constant := make([]bool, len(in))
	for i, v := range in {
		constant[i] = i > 0 && !(i <= 2 && v.IsTensor() && kind == "aten::_native_multi_head_attention")
	}
	outs := make([]*graph.Type, nOut)
	for i := range outs {
		outs[i] = tT
	}
	p, err := buildNode(b, kind, in, ty, outs, constant)
	require.NoError(b, err)
	p.Scratch = &gemm.Scratch{}
	require.NoError(b, p.Run())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNestedLeftAligned: _nested_tensor_from_mask_left_aligned's answers
// and errors, as torch 1.13 gives them for these masks.
func TestNestedLeftAligned(t *testing.T) {
	x := iv(ivalue.F32Tensor(make([]float32, 3*4*5), 3, 4, 5))
	b := func(rows ...[]bool) ivalue.IValue {
		var d []bool
		for _, r := range rows {
			d = append(d, r...)
		}
		return iv(ivalue.BoolTensor(d, len(rows), len(rows[0])))
	}
	T, F := true, false
	for _, c := range []struct {
		name string
		mask ivalue.IValue
		want bool
	}{
		{"prefixes", b([]bool{T, T, F, F}, []bool{T, F, F, F}, []bool{T, T, T, T}), true},
		{"gap", b([]bool{T, F, T, F}, []bool{T, F, F, F}, []bool{T, T, T, T}), false},
		{"empty row", b([]bool{F, F, F, F}, []bool{T, F, F, F}, []bool{T, T, T, T}), true},
		{"leading false", b([]bool{F, T, T, T}, []bool{T, T, T, T}, []bool{T, T, T, T}), false},
	} {
		outs, _, err := runNode(t, "aten::_nested_tensor_from_mask_left_aligned", []ivalue.IValue{x, c.mask}, []*graph.Type{tT, tT}, []*graph.Type{tB})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, outs[0].Bool(), c.name)
	}
	for _, c := range []struct {
		name string
		t, m ivalue.IValue
		want string
	}{
		{"float mask", x, iv(ivalue.F32Tensor(make([]float32, 12), 3, 4)), "Expected mask to be of ScalarType Bool"},
		{"mask size", x, iv(ivalue.BoolTensor(make([]bool, 15), 3, 5)), "Mask size should match input size"},
		{"2-d input", iv(ivalue.F32Tensor(make([]float32, 20), 4, 5)), iv(ivalue.BoolTensor(make([]bool, 20), 4, 5)), "Input should be a 3D tensor"},
		{"3-d mask", x, iv(ivalue.BoolTensor(make([]bool, 12), 3, 4, 1)), "Padding mask should be 2D"},
	} {
		_, _, err := runNode(t, "aten::_nested_tensor_from_mask_left_aligned", []ivalue.IValue{c.t, c.m}, []*graph.Type{tT, tT}, []*graph.Type{tB})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}
