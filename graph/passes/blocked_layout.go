package passes

import (
	"math"
	"slices"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
)

// The blocked layout's ops (ops.ConvNCHWcSchema and the reorders; see
// [Blocked layout] in ops).
const (
	ConvNCHWcKind = "gosr::conv_nchwc"
	ToNCHWcKind   = "gosr::to_nchwc"
	FromNCHWcKind = "gosr::from_nchwc"
)

// nchwcBlock is the blocked layout's channels a block: a convolution
// joins a chain only with input and output channels a multiple of it.
const nchwcBlock = 16

// UseBlockedLayout keeps chains of convolutions in the channel-blocked
// layout their direct kernels compute in (see [Blocked layout] in ops):
// each convolution the kernels take whatever its map (ungrouped,
// constant float32 weight of 2-d kernels, input and output channels
// multiples of 16, stride at most 2, no dilation; plain, or
// gosr::conv_clamp, conv_add_clamp or conv_act) joins the one it reads
// (its input or its residual), and a chain becomes gosr::conv_nchwc
// nodes with a gosr::to_nchwc before it for each tensor it reads from
// outside and a gosr::from_nchwc after each convolution read outside
// it (convolutions reading one tensor from outside share a chain). A
// chain is rewritten only where it has fewer such reorders than
// convolutions: each convolution left in planes transposes its input
// and its output itself, and a reorder is one such transpose. A
// convolution whose residual comes from outside the chain joins only
// where the chain reads that tensor as some convolution's input too
// (resnets' identity shortcuts): a residual that broadcasts could not be
// reordered. A chain whose tensors anything writes in place stays in
// planes (its blocked copies would go stale). Only when the runtime has
// the ops and asks for the pass (ops.BlockedLayoutPays).
func UseBlockedLayout(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvNCHWcKind) || !c.hasOp(ToNCHWcKind) || !c.hasOp(FromNCHWcKind) {
		return nil
	}
	db, err := c.analyze(g)
	if err != nil {
		return err
	}
	var e edits
	changed := false
	blocks := []*graph.Block{g.Block}
	g.Walk(func(n *graph.Node) { blocks = append(blocks, n.Blocks...) })
	for _, b := range blocks {
		if blockedChains(g, b, db, &e) {
			changed = true
		}
	}
	if changed {
		e.apply()
	}
	return nil
}

// blockedConv is a convolution that can join a blocked chain: its
// arguments as conv_nchwc takes them.
type blockedConv struct {
	n              *graph.Node
	args           []*graph.Value // input, weight, bias, stride, padding, dilation, groups
	other          *graph.Value   // the residual, or nil
	lo, hi, act    *graph.Value   // nil: none (-Inf, +Inf, "")
	chain          int            // its chain's representative (find)
	input, residue *blockedConv   // the members its input and residual come from, or nil
}

// blockedCandidate returns n as a blockedConv, or false.
func blockedCandidate(n *graph.Node) (*blockedConv, bool) {
	m := &blockedConv{n: n}
	switch {
	case fusableConv(n):
		m.args = convArgs(n)
	case n.Kind == ConvClampKind && len(n.Inputs) == 9:
		m.args, m.lo, m.hi = n.Inputs[:7], n.Inputs[7], n.Inputs[8]
	case n.Kind == ConvAddClampKind && len(n.Inputs) == 10:
		m.args, m.other, m.lo, m.hi = n.Inputs[:7], n.Inputs[7], n.Inputs[8], n.Inputs[9]
	case n.Kind == ConvActKind && len(n.Inputs) == 8:
		m.args, m.act = n.Inputs[:7], n.Inputs[7]
	default:
		return nil, false
	}
	if len(n.Outputs) != 1 {
		return nil, false
	}
	w, ok := constTensor(m.args[1], false)
	if !ok || w.DType() != ivalue.Float32 || w.Dim() != 4 || w.Size(0)%nchwcBlock != 0 || w.Size(1)%nchwcBlock != 0 || w.Size(0) == 0 || w.Size(1) == 0 {
		return nil, false
	}
	groups, ok := graph.ConstantValue(m.args[6])
	if !ok || groups.Kind() != ivalue.KindInt || groups.Int() != 1 {
		return nil, false
	}
	stride, okS := constInts(m.args[3])
	pad, okP := constInts(m.args[4])
	dil, okD := constInts(m.args[5])
	if !okS || !okP || !okD || !allAre(dil, 1) || len(stride) > 2 || len(pad) > 2 {
		return nil, false
	}
	for _, s := range stride {
		if s < 1 || s > 2 {
			return nil, false
		}
	}
	return m, true
}

// blockedRounds bounds blockedChains' rounds of dropping members whose
// residual no longer comes from their chain.
const blockedRounds = 4

// blockedChains rewrites b's chains worth it (see UseBlockedLayout)
// into e, reporting whether there was one.
func blockedChains(g *graph.Graph, b *graph.Block, db *alias.DB, e *edits) bool {
	var all []*blockedConv
	of := map[*graph.Node]*blockedConv{}
	for _, n := range b.Nodes {
		if m, ok := blockedCandidate(n); ok {
			all = append(all, m)
			of[n] = m
		}
	}
	if len(all) < 2 {
		return false
	}
	member := func(v *graph.Value) *blockedConv {
		if v == nil || v.Node == nil {
			return nil
		}
		return of[v.Node]
	}
	// Chains as sets joined by union-find, until every member's
	// residual is a member's output or one of its chain's inputs (a
	// member with another loses its place, which may split chains).
	parent := make([]int, len(all))
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for round := 0; ; round++ {
		index := make(map[*blockedConv]int, len(all))
		for i, m := range all {
			parent[i], index[m] = i, i
		}
		parent = parent[:len(all)]
		// Members reading one tensor from outside share a chain, and
		// so its one reorder.
		reader := map[*graph.Value]int{}
		for i, m := range all {
			if m.input = member(m.args[0]); m.input != nil {
				parent[find(i)] = find(index[m.input])
			} else if j, ok := reader[m.args[0]]; ok {
				parent[find(i)] = find(j)
			} else {
				reader[m.args[0]] = i
			}
			if m.residue = member(m.other); m.residue != nil {
				parent[find(i)] = find(index[m.residue])
			}
		}
		// Each chain's inputs from outside.
		reads := map[int]map[*graph.Value]bool{}
		for i, m := range all {
			m.chain = find(i)
			if m.input == nil {
				if reads[m.chain] == nil {
					reads[m.chain] = map[*graph.Value]bool{}
				}
				reads[m.chain][m.args[0]] = true
			}
		}
		// Dropping a member can split a chain and strand another's
		// residual, one after another; past a few rounds (a hostile
		// graph) only residuals from kept members stay, decided in
		// block order (producers first), which is a fixed point at
		// once and keeps the pass linear.
		last := round >= blockedRounds
		kept := all[:0]
		for _, m := range all {
			ok := m.other == nil || m.residue != nil || reads[m.chain][m.other]
			if last {
				ok = m.other == nil || (m.residue != nil && of[m.residue.n] != nil)
			}
			if ok {
				kept = append(kept, m)
				continue
			}
			delete(of, m.n)
		}
		if len(kept) == len(all) {
			break
		}
		all = kept
	}
	// The chains in the order of their first members, so the rewritten
	// graph (its new values' numbers) is the same on every run.
	chains := map[int][]*blockedConv{}
	var order []int
	for _, m := range all {
		if chains[m.chain] == nil {
			order = append(order, m.chain)
		}
		chains[m.chain] = append(chains[m.chain], m)
	}
	changed := false
	for _, c := range order {
		if blockedChain(g, b, chains[c], of, db, e) {
			changed = true
		}
	}
	return changed
}

// blockedChain rewrites one chain ms (in block order) into e if it has
// fewer reorders than convolutions, reporting whether it did.
func blockedChain(g *graph.Graph, b *graph.Block, ms []*blockedConv, of map[*graph.Node]*blockedConv, db *alias.DB, e *edits) bool {
	in := map[*graph.Node]bool{}
	for _, m := range ms {
		in[m.n] = true
	}
	// The tensors read from outside, each with the first member that
	// reads it, and the members read outside: their outputs' uses by
	// anything but a member's input or residual.
	var reads []*graph.Value
	first := map[*graph.Value]*blockedConv{}
	for _, m := range ms {
		for _, v := range []*graph.Value{m.args[0], m.other} {
			if v != nil && (v.Node == nil || !in[v.Node]) && first[v] == nil {
				first[v] = m
				reads = append(reads, v)
			}
		}
	}
	var outs []*blockedConv
	for _, m := range ms {
		for _, u := range m.n.Outputs[0].Uses {
			if !in[u.User] || !(u.Index == 0 || (of[u.User].other != nil && u.Index == 7)) {
				outs = append(outs, m)
				break
			}
		}
	}
	if len(reads)+len(outs) >= len(ms) {
		return false
	}
	for _, v := range reads {
		if db.HasWriters(v) {
			return false
		}
	}
	for _, m := range ms {
		if db.HasWriters(m.n.Outputs[0]) {
			return false
		}
	}
	blocked := map[*graph.Value]*graph.Value{}
	for _, v := range reads {
		r := g.NewNode(ToNCHWcKind, []*graph.Value{v}, 1)
		r.Outputs[0].Type = graph.Tensor
		r.SourceRange = first[v].n.SourceRange
		e.insertBefore(r, first[v].n)
		blocked[v] = r.Outputs[0]
	}
	for _, m := range ms {
		pos := m.n
		other := blocked[m.other]
		if m.other == nil {
			other = e.constant(g, ivalue.IValue{}, graph.None, pos)
		}
		lo, hi, act := m.lo, m.hi, m.act
		if lo == nil {
			lo = e.constant(g, ivalue.FromDouble(math.Inf(-1)), graph.Float, pos)
			hi = e.constant(g, ivalue.FromDouble(math.Inf(1)), graph.Float, pos)
		}
		if act == nil {
			act = e.constant(g, ivalue.FromString(""), graph.Str, pos)
		}
		ins := append(slices.Clone(m.args), other, lo, hi, act)
		ins[0] = blocked[m.args[0]]
		n := g.NewNode(ConvNCHWcKind, ins, 1)
		n.Outputs[0].Type = graph.Tensor
		n.SourceRange = pos.SourceRange
		e.replace(pos, n)
		blocked[pos.Outputs[0]] = n.Outputs[0]
	}
	for _, m := range outs {
		old := m.n.Outputs[0]
		r := g.NewNode(FromNCHWcKind, []*graph.Value{blocked[old]}, 1)
		r.Outputs[0].Type, r.Outputs[0].Name = old.Type, old.Name
		r.SourceRange = m.n.SourceRange
		e.insertAfter(r, m.n, b)
		old.ReplaceAllUsesWith(r.Outputs[0])
	}
	return true
}
