package ops

import (
	"slices"
	"strconv"
	"unsafe"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::einsum for float32, as PyTorch 1.13 evaluates it: operands are
// contracted left to right, two at a time (the optional path argument
// only reorders this and is ignored), each contraction one batched GEMM
// on the shared gemm (package ops/gemm).
//
// Before contracting, each operand is viewed with one dimension per
// distinct subscript: a subscript repeated within an operand is its
// diagonal (stride the sum of the dims' strides), and size-1 dims are
// dropped (they broadcast). Subscripts found in only one operand and not
// in the output are summed out of that operand first. A contraction of
// A and B then has batch subscripts (in both, needed later), contracted
// ones (in both, not needed later) and ones of A or B alone; the strided
// views go to the GEMM as they are when each group merges into a single
// stride, else the operand is copied into [batch, rows, cols] order. The
// last contraction writes straight into the output when the output's
// order is [batch, A's, B's] or [batch, B's, A's] (C transposed).
//
// The equation is parsed when the node is built if it is a constant;
// the plan for the operands' shapes is made on the first run and kept
// while the shapes stay the same, so steady runs allocate nothing.

const einsumSchema = "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor"

func init() {
	RegisterOut("aten::einsum", func(n *graph.Node) Kernel {
		if !n.Matches(einsumSchema) {
			return nil
		}
		k := &einsumKernel{}
		if v, ok := graph.ConstantValue(n.Inputs[0]); ok && v.Kind() == ivalue.KindString {
			eq, err := parseEinsum(v.Str())
			if err != nil {
				k.eqErr = err
			} else {
				k.eq = eq
			}
		}
		return k.run
	})
}

// einsumEll marks the ellipsis among an operand's subscripts.
const einsumEll = -1

// einsumLetters is the number of subscript letters: A-Z are 0-25, a-z
// 26-51 (PyTorch's order for the implicit output). Ellipsis dimension j
// (of the broadcast ellipsis, aligned right) is subscript 52+j.
const einsumLetters = 52

type einsumEq struct {
	ops      [][]int // per operand: subscripts, einsumEll for "..."
	out      []int   // explicit output subscripts (einsumEll allowed)
	explicit bool
}

func einsumLabel(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	}
	return -2
}

// parseEinsum parses an equation such as "b i d, b j d -> b i j"
// (whitespace is ignored).
func parseEinsum(s string) (*einsumEq, error) {
	eq := &einsumEq{}
	lhs, rhs := s, ""
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '-' && s[i+1] == '>' {
			lhs, rhs, eq.explicit = s[:i], s[i+2:], true
			break
		}
	}
	parse := func(part string, what string, idx int) ([]int, error) {
		subs := []int{}
		ell := false
		for i := 0; i < len(part); i++ {
			c := part[i]
			switch {
			case c == ' ' || c == '\t' || c == '\n':
			case c == '.':
				if ell || i+2 >= len(part) || part[i+1] != '.' || part[i+2] != '.' {
					if ell {
						return nil, Errorf("einsum(): found '.' for %s that is not part of any ellipsis (or a second ellipsis)", einsumWhat(what, idx))
					}
					return nil, Errorf("einsum(): found '.' for %s that is not part of any ellipsis", einsumWhat(what, idx))
				}
				ell = true
				subs = append(subs, einsumEll)
				i += 2
			default:
				l := einsumLabel(c)
				if l < 0 {
					return nil, Errorf("einsum(): invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]", i)
				}
				subs = append(subs, l)
			}
		}
		return subs, nil
	}
	start := 0
	for i := 0; i <= len(lhs); i++ {
		if i == len(lhs) || lhs[i] == ',' {
			subs, err := parse(lhs[start:i], "operand", len(eq.ops))
			if err != nil {
				return nil, err
			}
			eq.ops = append(eq.ops, subs)
			start = i + 1
		}
	}
	if eq.explicit {
		out, err := parse(rhs, "output", 0)
		if err != nil {
			return nil, err
		}
		seen := [einsumLetters]bool{}
		for _, l := range out {
			if l == einsumEll {
				continue
			}
			if seen[l] {
				return nil, Errorf("einsum(): output subscript %c appears more than once in the output", einsumChar(l))
			}
			seen[l] = true
			found := false
			for _, op := range eq.ops {
				if slices.Contains(op, l) {
					found = true
					break
				}
			}
			if !found {
				return nil, Errorf("einsum(): output subscript %c does not appear in the equation for any input operand", einsumChar(l))
			}
		}
		eq.out = out
	}
	return eq, nil
}

func einsumWhat(what string, idx int) string {
	if what == "output" {
		return "the output"
	}
	return "operand " + strconv.Itoa(idx)
}

func einsumChar(l int) byte {
	if l < 26 {
		return byte('A' + l)
	}
	return byte('a' + l - 26)
}

// ---- plan ----

// einsumOperand is one operand's distinct, non-broadcast subscripts.
type einsumOperand struct {
	labels []int   // in first-occurrence order
	dims   [][]int // the operand's dims carrying each label (several: a diagonal)
	keep   []int   // labels left after summing the private ones, in order
	priv   []int   // labels summed out of this operand alone
}

// einsumStep contracts the accumulated result (A) with operand op (B).
type einsumStep struct {
	op             int
	batch, m, k, n []int // label groups; m of A, n of B
	res            []int // the result's labels: batch, m, n (n, m when swap)
	swap           bool  // compute C^T = B^T A^T (result order batch, n, m)
	direct         bool  // the result is the output (in its order)
}

type einsumPlan struct {
	key      []int // operand ranks and sizes the plan is for
	nlabels  int
	size     []int // per label: its size (1 where every operand broadcasts it)
	ops      []einsumOperand
	out      []int // output labels
	outSizes []int
	steps    []einsumStep
	// single operand: the output straight from the (reduced) operand
	single bool
}

func einsumKey(buf []int, ts []*ivalue.Tensor) []int {
	buf = buf[:0]
	for _, t := range ts {
		buf = append(buf, t.Dim())
		buf = append(buf, t.Sizes()...)
	}
	return buf
}

// makeEinsumPlan resolves the equation for the operands' shapes.
func makeEinsumPlan(eq *einsumEq, ts []*ivalue.Tensor) (*einsumPlan, error) {
	if len(eq.ops) != len(ts) {
		if len(eq.ops) > len(ts) {
			return nil, Errorf("einsum(): more operands were specified in the equation than were provided")
		}
		return nil, Errorf("einsum(): more operands were provided than specified in the equation")
	}
	// Ellipsis width.
	ell := 0
	for i, subs := range eq.ops {
		nl := 0
		hasEll := false
		for _, l := range subs {
			if l == einsumEll {
				hasEll = true
			} else {
				nl++
			}
		}
		r := ts[i].Dim()
		if !hasEll && r != nl {
			return nil, Errorf("einsum(): the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d and no ellipsis was given", nl, r, i)
		}
		if hasEll && r < nl {
			return nil, Errorf("einsum(): the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d", nl, r, i)
		}
		ell = max(ell, r-nl)
	}
	nlabels := einsumLetters + ell
	pl := &einsumPlan{key: einsumKey(nil, ts), nlabels: nlabels, size: make([]int, nlabels)}
	for i := range pl.size {
		pl.size[i] = -1 // unseen
	}
	// Per operand: the label of each dim, sizes checked.
	count := make([]int, nlabels) // operands holding each label
	for i, subs := range eq.ops {
		t := ts[i]
		dimLabels := make([]int, 0, t.Dim())
		for _, l := range subs {
			if l == einsumEll {
				w := t.Dim() - (len(subs) - 1)
				for j := 0; j < w; j++ {
					dimLabels = append(dimLabels, einsumLetters+ell-w+j)
				}
				continue
			}
			dimLabels = append(dimLabels, l)
		}
		var o einsumOperand
		for d, l := range dimLabels {
			sz := t.Size(d)
			j := slices.Index(o.labels, l)
			if j >= 0 {
				if s0 := t.Size(o.dims[j][0]); s0 != sz {
					return nil, Errorf("einsum(): subscript %s is repeated for operand %d but the sizes don't match, %d != %d", einsumName(l), i, sz, s0)
				}
				o.dims[j] = append(o.dims[j], d)
				continue
			}
			switch ps := pl.size[l]; {
			case ps < 0 || ps == 1:
				pl.size[l] = sz
			case sz != 1 && sz != ps:
				return nil, Errorf("einsum(): subscript %s has size %d for operand %d which does not broadcast with previously seen size %d", einsumName(l), sz, i, ps)
			}
			o.labels = append(o.labels, l)
			o.dims = append(o.dims, []int{d})
		}
		// Size-1 dims broadcast: drop them.
		labels, dims := o.labels[:0], o.dims[:0]
		for j, l := range o.labels {
			if t.Size(o.dims[j][0]) == 1 {
				continue
			}
			labels, dims = append(labels, l), append(dims, o.dims[j])
			count[l]++
		}
		o.labels, o.dims = labels, dims
		pl.ops = append(pl.ops, o)
	}
	// Output labels.
	if eq.explicit {
		for _, l := range eq.out {
			if l == einsumEll {
				for j := 0; j < ell; j++ {
					pl.out = append(pl.out, einsumLetters+j)
				}
				continue
			}
			pl.out = append(pl.out, l)
		}
	} else {
		for j := 0; j < ell; j++ {
			pl.out = append(pl.out, einsumLetters+j)
		}
		var occ [einsumLetters]int
		for _, subs := range eq.ops {
			for _, l := range subs {
				if l != einsumEll {
					occ[l]++
				}
			}
		}
		for l := 0; l < einsumLetters; l++ {
			if occ[l] == 1 {
				pl.out = append(pl.out, l)
			}
		}
	}
	inOut := make([]bool, nlabels)
	for _, l := range pl.out {
		inOut[l] = true
		sz := pl.size[l]
		if sz < 0 {
			sz = 1
		}
		pl.outSizes = append(pl.outSizes, sz)
	}
	// Private labels are summed out of their operand.
	for i := range pl.ops {
		o := &pl.ops[i]
		for _, l := range o.labels {
			if count[l] == 1 && !inOut[l] {
				o.priv = append(o.priv, l)
			} else {
				o.keep = append(o.keep, l)
			}
		}
	}
	if len(pl.ops) == 1 {
		pl.single = true
		return pl, nil
	}
	// Contractions, left to right.
	acc := slices.Clone(pl.ops[0].keep)
	for i := 1; i < len(pl.ops); i++ {
		b := pl.ops[i].keep
		kept := slices.Clone(inOut)
		for _, o := range pl.ops[i+1:] {
			for _, l := range o.keep {
				kept[l] = true
			}
		}
		s := einsumStep{op: i}
		for _, l := range acc {
			switch {
			case !slices.Contains(b, l):
				s.m = append(s.m, l)
			case kept[l]:
				s.batch = append(s.batch, l)
			default:
				s.k = append(s.k, l)
			}
		}
		for _, l := range b {
			if !slices.Contains(acc, l) {
				s.n = append(s.n, l)
			}
		}
		if i == len(pl.ops)-1 {
			pl.orderFinal(&s)
		}
		s.res = append(append(append([]int{}, s.batch...), s.m...), s.n...)
		if s.swap {
			s.res = append(append(append([]int{}, s.batch...), s.n...), s.m...)
		}
		pl.steps = append(pl.steps, s)
		acc = s.res
	}
	return pl, nil
}

func einsumName(l int) string {
	if l < einsumLetters {
		return string(einsumChar(l))
	}
	return "..."
}

// orderFinal orders the last contraction's groups as the output has
// them and decides whether its result can be the output itself.
func (pl *einsumPlan) orderFinal(s *einsumStep) {
	pos := func(l int) int { return slices.Index(pl.out, l) }
	byOut := func(g []int) {
		slices.SortStableFunc(g, func(a, b int) int { return pos(a) - pos(b) })
	}
	byOut(s.batch)
	byOut(s.m)
	byOut(s.n)
	// The output's labels that have a size other than 1, in order.
	var seq []int
	for _, l := range pl.out {
		if pl.size[l] != 1 {
			seq = append(seq, l)
		}
	}
	strip := func(gs ...[]int) []int {
		var r []int
		for _, g := range gs {
			for _, l := range g {
				if pl.size[l] != 1 {
					r = append(r, l)
				}
			}
		}
		return r
	}
	switch {
	case slices.Equal(seq, strip(s.batch, s.m, s.n)):
		s.direct = true
	case slices.Equal(seq, strip(s.batch, s.n, s.m)):
		s.direct, s.swap = true, true
	}
}

// ---- run ----

// einsumView is a float32 strided view with one dim per label.
type einsumView struct {
	data   []float32
	off    int
	labels []int
	stride []int // per label id (0: absent)
	sizeOf []int // per label id (1: absent)
}

func (v *einsumView) reset(nl int) {
	if len(v.stride) != nl {
		v.stride, v.sizeOf = make([]int, nl), make([]int, nl)
		for i := range v.sizeOf {
			v.sizeOf[i] = 1
		}
		v.labels = v.labels[:0]
		return
	}
	for _, l := range v.labels {
		v.stride[l], v.sizeOf[l] = 0, 1
	}
	v.labels = v.labels[:0]
}

func (v *einsumView) add(l, size, stride int) {
	v.labels = append(v.labels, l)
	v.stride[l], v.sizeOf[l] = stride, size
}

// contig makes v the contiguous buffer buf holding labels in order
// (labels must not be v.labels itself).
func (v *einsumView) contig(buf []float32, labels []int, size []int) {
	v.reset(len(size))
	v.data, v.off = buf, 0
	v.labels = append(v.labels, labels...)
	st := 1
	for i := len(labels) - 1; i >= 0; i-- {
		l := labels[i]
		v.stride[l], v.sizeOf[l] = st, size[l]
		st *= size[l]
	}
}

type einsumState struct {
	key   []int
	plan  *einsumPlan
	eqStr string
	eq    *einsumEq
	ts    []*ivalue.Tensor
	views []einsumView
	acc   einsumView
	copyA einsumView
	copyB einsumView
	order [2][]int
	bufs  [4][]float32 // results (0, 1), copies of A (2) and B (3)
	opBuf [][]float32  // operands with private labels summed
	// index scratch
	sizes, ds, ss, idx []int
}

// einsumKernel holds the equation parsed at build time (a constant), or
// its parse error; nil for an equation given at run time.
type einsumKernel struct {
	eq    *einsumEq
	eqErr error
}

func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func (k *einsumKernel) run(p *ProcessedNode) error {
	st, _ := p.State.(*einsumState)
	if st == nil {
		st = &einsumState{}
		p.State = st
	}
	eq := k.eq
	if eq == nil {
		if k.eqErr != nil {
			return k.eqErr
		}
		s := p.Input(0).Str()
		if st.eq == nil || st.eqStr != s {
			e, err := parseEinsum(s)
			if err != nil {
				return err
			}
			st.eq, st.eqStr, st.plan = e, s, nil
		}
		eq = st.eq
	}
	l := p.Input(1).List()
	if l == nil {
		return Errorf("einsum: expected a list of tensors, got %s", p.Input(1).Kind())
	}
	st.ts = st.ts[:0]
	for i, it := range l.Items {
		t := it.Tensor()
		if t == nil {
			return Errorf("einsum: operand %d is not a tensor", i)
		}
		if t.DType() != ivalue.Float32 {
			return Errorf("einsum: operand %d: expected a float32 tensor, got %s", i, t.DType())
		}
		st.ts = append(st.ts, t)
	}
	if len(st.ts) == 0 {
		return Errorf("einsum(): must provide at least one operand")
	}
	st.key = einsumKey(st.key, st.ts)
	if st.plan == nil || !slices.Equal(st.plan.key, st.key) {
		pl, err := makeEinsumPlan(eq, st.ts)
		if err != nil {
			return err
		}
		st.plan = pl
		st.views = make([]einsumView, len(pl.ops))
		st.opBuf = make([][]float32, len(pl.ops))
		n := pl.nlabels + 8
		st.sizes, st.ds, st.ss, st.idx = make([]int, 0, n), make([]int, 0, n), make([]int, 0, n), make([]int, n)
	}
	return einsumRun(p, st)
}

func einsumRun(p *ProcessedNode, st *einsumState) error {
	pl := st.plan
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, pl.outSizes)
	o := out.F32Contig()
	// Operand views, private labels summed.
	for i, t := range st.ts {
		v := &st.views[i]
		op := &pl.ops[i]
		v.reset(pl.nlabels)
		v.data, v.off = t.F32(), t.Offset()
		for j, l := range op.labels {
			s := 0
			for _, d := range op.dims[j] {
				s += t.Strides()[d]
			}
			v.add(l, t.Size(op.dims[j][0]), s)
		}
		if pl.single {
			// Straight into the output, in its order.
			einsumReduce(st, o, v, pl.out, op.priv)
			return nil
		}
		if len(op.priv) > 0 {
			n := 1
			for _, l := range op.keep {
				n *= pl.size[l]
			}
			st.opBuf[i] = growF32(st.opBuf[i], n)
			einsumReduce(st, st.opBuf[i], v, op.keep, op.priv)
			v.contig(st.opBuf[i], op.keep, pl.size)
		}
	}
	a := &st.views[0]
	for si := range pl.steps {
		s := &pl.steps[si]
		b := &st.views[s.op]
		n := 1
		for _, l := range s.res {
			n *= pl.size[l]
		}
		var c []float32
		resBuf := si % 2 // results alternate between bufs[0] and bufs[1]
		if s.direct {
			c = o
		} else {
			st.bufs[resBuf] = growF32(st.bufs[resBuf], n)
			c = st.bufs[resBuf]
		}
		einsumContract(p.Scratch, st, s, a, b, c)
		if s.direct {
			return nil
		}
		st.acc.contig(c, s.res, pl.size)
		a = &st.acc
	}
	// The last result, permuted into the output.
	einsumReduce(st, o, a, pl.out, nil)
	return nil
}

// einsumReduce writes dst (contiguous, dims keep in order) = the sum of
// v over labels sum (none: a permuted copy). keep may hold labels v
// lacks (size 1).
func einsumReduce(st *einsumState, dst []float32, v *einsumView, keep, sum []int) {
	if len(dst) == 0 {
		return
	}
	if len(sum) == 0 {
		st.sizes, st.ds, st.ss = st.sizes[:0], st.ds[:0], st.ss[:0]
		stride := len(dst)
		for _, l := range keep {
			sz := v.sizeOf[l]
			stride /= sz
			st.sizes = append(st.sizes, sz)
			st.ds = append(st.ds, stride)
			st.ss = append(st.ss, v.stride[l])
		}
		if len(st.sizes) == 0 {
			dst[0] = v.data[v.off]
			return
		}
		copyND(f32Bytes(dst), 0, st.ds, f32Bytes(v.data), v.off, st.ss, st.sizes, 4)
		return
	}
	// Outer odometer over keep, inner over sum (float64 accumulation).
	for _, l := range sum {
		if v.sizeOf[l] == 0 {
			clear(dst)
			return
		}
	}
	nk, ns := len(keep), len(sum)
	idx := st.idx[:nk+ns]
	clear(idx)
	off := v.off
	inner := sum[ns-1]
	innerN, innerS := v.sizeOf[inner], v.stride[inner]
	for i := range dst {
		var acc float64
		soff := off
		for {
			for j := 0; j < innerN; j++ {
				acc += float64(v.data[soff+j*innerS])
			}
			// advance the sum odometer (all but the innermost)
			d := ns - 2
			for ; d >= 0; d-- {
				l := sum[d]
				idx[nk+d]++
				soff += v.stride[l]
				if idx[nk+d] < v.sizeOf[l] {
					break
				}
				soff -= idx[nk+d] * v.stride[l]
				idx[nk+d] = 0
			}
			if d < 0 {
				break
			}
		}
		dst[i] = float32(acc)
		for d := nk - 1; d >= 0; d-- {
			l := keep[d]
			idx[d]++
			off += v.stride[l]
			if idx[d] < v.sizeOf[l] {
				break
			}
			off -= idx[d] * v.stride[l]
			idx[d] = 0
		}
	}
}

// einsumGroup merges labels g of v into one dimension: its size and
// stride, and whether the labels' strides allow it.
func einsumGroup(v *einsumView, g []int) (size, stride int, ok bool) {
	size, stride = 1, 0
	for i := len(g) - 1; i >= 0; i-- {
		l := g[i]
		sz, s := v.sizeOf[l], v.stride[l]
		if sz == 1 {
			continue
		}
		if size == 1 {
			size, stride = sz, s
			continue
		}
		if s != stride*size {
			return 0, 0, false
		}
		size *= sz
	}
	return size, stride, true
}

// einsumContract computes step s's result c (contiguous, labels s.res)
// from A (a) and B (b).
func einsumContract(sc *gemm.Scratch, st *einsumState, s *einsumStep, a, b *einsumView, c []float32) {
	pl := st.plan
	ma, rsA, ok1 := einsumGroup(a, s.m)
	ka, csA, ok2 := einsumGroup(a, s.k)
	if !ok1 || !ok2 {
		a = einsumCopy(st, 2, a, s.batch, s.m, s.k)
		ma, rsA, _ = einsumGroup(a, s.m)
		ka, csA, _ = einsumGroup(a, s.k)
	}
	// B's k group has A's sizes in the same order (the plan's sizes), so
	// only its stride is needed.
	_, rsB, ok3 := einsumGroup(b, s.k)
	nb, csB, ok4 := einsumGroup(b, s.n)
	if !ok3 || !ok4 {
		b = einsumCopy(st, 3, b, s.batch, s.k, s.n)
		_, rsB, _ = einsumGroup(b, s.k)
		nb, csB, _ = einsumGroup(b, s.n)
	}
	am := gemm.Mat{Data: a.data, Off: a.off, RS: rsA, CS: csA}
	bm := gemm.Mat{Data: b.data, Off: b.off, RS: rsB, CS: csB}
	mn := ma * nb
	nbat := 1
	for _, l := range s.batch {
		nbat *= pl.size[l]
	}
	if mn == 0 || nbat == 0 {
		return
	}
	idx := st.idx[:len(s.batch)]
	clear(idx)
	offA, offB := a.off, b.off
	for bi := 0; bi < nbat; bi++ {
		am.Off, bm.Off = offA, offB
		if s.swap {
			gemm.Gemm(sc, nb, ma, ka, 1, bm.T(), am.T(), nil, 0, c, bi*mn, ma)
		} else {
			gemm.Gemm(sc, ma, nb, ka, 1, am, bm, nil, 0, c, bi*mn, nb)
		}
		for d := len(s.batch) - 1; d >= 0; d-- {
			l := s.batch[d]
			idx[d]++
			offA += a.stride[l]
			offB += b.stride[l]
			if idx[d] < pl.size[l] {
				break
			}
			offA -= idx[d] * a.stride[l]
			offB -= idx[d] * b.stride[l]
			idx[d] = 0
		}
	}
}

// einsumCopy copies v into bufs[slot] in the order g1, g2, g3 and
// returns the contiguous view (kept in the state).
func einsumCopy(st *einsumState, slot int, v *einsumView, g1, g2, g3 []int) *einsumView {
	pl := st.plan
	cv, order := &st.copyA, &st.order[0]
	if slot == 3 {
		cv, order = &st.copyB, &st.order[1]
	}
	*order = append(append(append((*order)[:0], g1...), g2...), g3...)
	n := 1
	for _, l := range *order {
		n *= pl.size[l]
	}
	st.bufs[slot] = growF32(st.bufs[slot], n)
	einsumReduce(st, st.bufs[slot], v, *order, nil)
	cv.contig(st.bufs[slot], *order, pl.size)
	return cv
}

// f32Bytes views a float32 slice as bytes (for copyND).
func f32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)
}
