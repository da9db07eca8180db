package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::pad (F.pad's scripted form; modes constant, reflect, replicate,
// circular), aten::_pad_enum, aten::constant_pad_nd, reflection_pad1d/2d/3d,
// replication_pad1d/2d/3d and aten::_pad_circular, with PyTorch 1.13's
// argument checks (PadNd.cpp) and index rules (negative pads crop). Per
// padded dim a table maps each output position to an input position
// (times the stride) or -1 (the constant); the output is written row by
// row, the part of a row that maps straight onto the input copied.

type padMode uint8

const (
	padConstant padMode = iota // PyTorch's at::padding_mode order
	padReflect
	padReplicate
	padCircular
)

var padModeNames = [...]string{"constant", "reflect", "replicate", "circular"}

const (
	padSchema         = `aten::pad(Tensor self, int[] pad, str mode="constant", float? value=None) -> Tensor`
	padEnumSchema     = "aten::_pad_enum(Tensor self, int[] pad, int mode, float? value=None) -> Tensor"
	constantPadSchema = "aten::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor"
	padCircularSchema = "aten::_pad_circular(Tensor self, int[] pad) -> Tensor"
)

// padOp says how a node gives its mode: a fixed one with the number of
// padded dims (reflection_pad2d: reflect, 2; 0: any) or read at run time
// (aten::pad, _pad_enum).
type padOp struct {
	mode    padMode
	dims    int
	fromStr bool // aten::pad: mode string at input 2, value at 3
	fromInt bool // _pad_enum: mode int at input 2, value at 3
	value   bool // constant_pad_nd: Scalar value at input 2
}

func init() {
	reg := func(op, schema string, po padOp) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error { return padKernel(p, po) }
		})
	}
	reg("aten::pad", padSchema, padOp{fromStr: true})
	reg("aten::_pad_enum", padEnumSchema, padOp{fromInt: true})
	reg("aten::constant_pad_nd", constantPadSchema, padOp{mode: padConstant, value: true})
	reg("aten::_pad_circular", padCircularSchema, padOp{mode: padCircular})
	for d := 1; d <= 3; d++ {
		s := string(rune('0' + d))
		reg("aten::reflection_pad"+s+"d", "aten::reflection_pad"+s+"d(Tensor self, int["+string(rune('0'+2*d))+"] padding) -> Tensor", padOp{mode: padReflect, dims: d})
		reg("aten::replication_pad"+s+"d", "aten::replication_pad"+s+"d(Tensor self, int["+string(rune('0'+2*d))+"] padding) -> Tensor", padOp{mode: padReplicate, dims: d})
	}
}

type padState struct {
	pad   []int
	shape []int
	tabs  [][]int
	cnt   []int
}

func padKernel(p *ProcessedNode, po padOp) error {
	st, _ := p.State.(*padState)
	if st == nil {
		st = &padState{}
		p.State = st
	}
	x := p.Tensor(0)
	if x == nil {
		return Errorf("pad input: expected a tensor")
	}
	st.pad = p.IntsInto(1, st.pad)
	pad := st.pad
	mode := po.mode
	var value ivalue.IValue // None: 0
	switch {
	case po.fromStr:
		s := p.Input(2).Str()
		found := false
		for i, name := range padModeNames {
			if s == name {
				mode, found = padMode(i), true
			}
		}
		if !found {
			return Errorf(`pad: unrecognised padding mode %q (expected "constant", "reflect", "replicate" or "circular")`, s)
		}
		value = *p.Input(3)
	case po.fromInt:
		m := p.Int(2)
		if m < 0 || m > int64(padCircular) {
			return Errorf("_pad_enum: unrecognised padding mode %d", m)
		}
		mode = padMode(m)
		value = *p.Input(3)
	case po.value:
		value = *p.Input(2)
	}
	nd := x.Dim()
	if len(pad)%2 != 0 {
		return Errorf("pad: padding length must be divisible by 2, got %v", pad)
	}
	if len(pad) > 2*nd {
		return Errorf("pad: padding length should be less than or equal to two times the input dimension but got padding length %d and input of dimension %d", len(pad), nd)
	}
	k := len(pad) / 2 // padded dims: the last k
	name := padModeNames[mode]
	if mode != padConstant {
		if (po.fromStr || po.fromInt) && !value.IsNone() && value.AsFloat() != 0 {
			return Errorf(`pad: padding mode "%s" doesn't take in value argument`, name)
		}
		if po.dims != 0 && k != po.dims {
			return Errorf("%s pad %dd: expected %d padding values, got %v", name, po.dims, 2*po.dims, pad)
		}
		switch {
		case mode == padCircular && nd != k+2:
			return Errorf("pad circular: invalid padding size, expected a %d-d input for padding %v, got sizes %v", k+2, pad, x.Sizes())
		case k < 1 || k > 3 || (nd != k+1 && nd != k+2):
			return Errorf("pad %s: only 2D, 3D, 4D, 5D padding with non-constant padding are supported, got padding %v for sizes %v", name, pad, x.Sizes())
		}
	}
	sz, xst := x.Sizes(), x.Strides()
	st.shape = append(st.shape[:0], sz...)
	for i := 0; i < k; i++ {
		d := nd - 1 - i
		l, r, n := pad[2*i], pad[2*i+1], sz[d]
		out := n + l + r
		switch mode {
		case padConstant:
			if out < 0 {
				return Errorf("constant_pad_nd: the input size %d, plus negative padding %d and %d resulted in a negative output size, which is invalid", n, l, r)
			}
		case padReflect:
			if l >= n || r >= n {
				return Errorf("reflection pad: padding size should be less than the corresponding input dimension, but got padding (%d, %d) at dimension %d of input %v", l, r, d, sz)
			}
		case padCircular:
			if l > n || r > n {
				return Errorf("pad circular: padding value causes wrapping around more than once (padding (%d, %d), size %d)", l, r, n)
			}
			if m := n - max(-l, 0) - max(-r, 0); out > 0 && (m <= 0 || l > m || r > m) {
				return Errorf("pad circular: padding (%d, %d) wraps around more than the %d elements left of size %d", l, r, m, n)
			}
		}
		if mode != padConstant && out < 1 {
			return Errorf("pad %s: input size %d with padding (%d, %d) gives output size %d, expected at least 1", name, n, l, r, out)
		}
		if mode == padReplicate && n == 0 {
			return Errorf("replication pad: expected a non-empty dimension %d, got sizes %v", d, sz)
		}
		st.shape[d] = out
	}
	o := p.OutTensor(0)
	o.Resize(x.DType(), st.shape)
	if o.Numel() == 0 {
		return nil
	}
	if nd == 0 {
		copyStrided(o, x)
		return nil
	}
	// Per dim: output position -> input offset (position times stride),
	// or -1 for the constant.
	if len(st.tabs) < nd {
		st.tabs = append(st.tabs, make([][]int, nd-len(st.tabs))...)
	}
	for d := 0; d < nd; d++ {
		out := st.shape[d]
		t := st.tabs[d][:0]
		i := nd - 1 - d
		if i >= k {
			for j := 0; j < out; j++ {
				t = append(t, j*xst[d])
			}
		} else {
			l, n := pad[2*i], sz[d]
			for j := 0; j < out; j++ {
				t = append(t, padSource(mode, j, l, pad[2*i+1], n)*xst[d])
			}
			if mode == padConstant {
				for j := range t {
					if s := j - l; s < 0 || s >= n {
						t[j] = -1
					}
				}
			}
		}
		st.tabs[d] = t
	}
	last := nd - 1
	lo, hi := 0, st.shape[last] // the row part that maps onto the input
	if k > 0 {
		lo, hi = max(pad[0], 0), min(pad[0]+sz[last], st.shape[last])
		hi = max(lo, hi)
	}
	if cap(st.cnt) < nd {
		st.cnt = make([]int, nd)
	}
	g := padGeom{tabs: st.tabs[:nd], cnt: st.cnt[:nd], lo: lo, hi: hi, unit: xst[last] == 1, off: x.Offset()}
	if err := padRowsAny(&g, x, o, value); err != nil {
		return Errorf("pad: %v", err)
	}
	return nil
}

// padRowsAny runs padRows for x's dtype, the constant from value (None:
// zero).
func padRowsAny(g *padGeom, x, o *ivalue.Tensor, value ivalue.IValue) error {
	switch x.DType() {
	case ivalue.Float32:
		padRows(g, x.F32(), o.F32Contig(), float32(padValue(value)))
	case ivalue.Float64:
		padRows(g, x.F64(), o.F64Contig(), padValue(value))
	case ivalue.Int64:
		padRows(g, x.I64(), o.I64Contig(), int64(padIntValue(value)))
	case ivalue.Int32:
		padRows(g, x.I32(), o.I32Contig(), int32(padIntValue(value)))
	case ivalue.Uint8:
		padRows(g, x.U8(), o.U8Contig(), uint8(padIntValue(value)))
	case ivalue.Bool:
		padRows(g, x.B(), o.BContig(), padValue(value) != 0)
	default:
		return Errorf("unsupported dtype %v", x.DType())
	}
	return nil
}

func padValue(v ivalue.IValue) float64 {
	if v.IsNone() {
		return 0
	}
	return v.AsFloat()
}

func padIntValue(v ivalue.IValue) int64 {
	if v.IsNone() {
		return 0
	}
	if v.Kind() == ivalue.KindDouble {
		return int64(v.AsFloat())
	}
	return v.AsInt()
}

// padSource is the input position output position j reads along a dim
// of n elements padded by l before and r after, as PyTorch's
// reflection/replication kernels and _pad_circular compute it
// (constant: j - l, checked by the caller). Circular padding wraps
// within the input left after negative pads crop it.
func padSource(mode padMode, j, l, r, n int) int {
	iStart, oStart := max(0, -l), max(0, l)
	var ip int
	switch mode {
	case padReflect:
		switch {
		case j < l:
			ip = 2*l - j
		case j < n+l:
			ip = j
		default:
			ip = 2*(n+l-1) - j
		}
		return ip - oStart + iStart
	case padReplicate:
		switch {
		case j < l:
			ip = l
		case j < n+l:
			ip = j
		default:
			ip = n + l - 1
		}
		return ip - oStart + iStart
	case padCircular:
		m := n - max(-l, 0) - max(-r, 0)
		return iStart + ((j-oStart)%m+m)%m
	}
	return j - l
}

// padGeom is one run's tables and the straight part [lo, hi) of a row.
type padGeom struct {
	tabs   [][]int
	cnt    []int
	lo, hi int
	unit   bool // the input's last dim has stride 1
	off    int
}

func padRows[T any](g *padGeom, src, dst []T, v T) {
	nd := len(g.tabs)
	lastTab := g.tabs[nd-1]
	w := len(lastTab)
	cnt := g.cnt
	clear(cnt)
	for r := 0; r < len(dst)/w; r++ {
		row := dst[r*w : (r+1)*w]
		off, pad := g.off, false
		for d := 0; d < nd-1; d++ {
			s := g.tabs[d][cnt[d]]
			if s < 0 {
				pad = true
				break
			}
			off += s
		}
		if pad {
			for j := range row {
				row[j] = v
			}
		} else {
			for j := 0; j < g.lo; j++ {
				if s := lastTab[j]; s >= 0 {
					row[j] = src[off+s]
				} else {
					row[j] = v
				}
			}
			if g.unit && g.hi > g.lo {
				s := off + lastTab[g.lo]
				copy(row[g.lo:g.hi], src[s:s+g.hi-g.lo])
			} else {
				for j := g.lo; j < g.hi; j++ {
					row[j] = src[off+lastTab[j]]
				}
			}
			for j := g.hi; j < w; j++ {
				if s := lastTab[j]; s >= 0 {
					row[j] = src[off+s]
				} else {
					row[j] = v
				}
			}
		}
		for d := nd - 2; d >= 0; d-- {
			if cnt[d]++; cnt[d] < len(g.tabs[d]) {
				break
			}
			cnt[d] = 0
		}
	}
}
