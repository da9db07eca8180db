package tscode

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// mergedStatically decides the value a variable has after an if whose
// branches give vals, when that needs no If output: both branches give
// the same scalar constant (`if dim == 3: c = mode == "nearest" else:
// c = False` with mode "bilinear"), or one branch always raises and the
// other gives a constant or a value from outside the If. Deciding it here
// lets later branches on it resolve at compile time, as PyTorch's
// constant propagation does, so that code a model never runs (another
// upsampling mode's kernel) does not reach the graph.
func (c *compiler) mergedStatically(vals [2]sv, have, term [2]bool, blocks [2]*graph.Block) (sv, bool) {
	var k ivalue.IValue
	var t *graph.Type
	n := 0
	var outer *graph.Value
	for i := range vals {
		if term[i] {
			continue // never falls through: its value is never seen
		}
		if !have[i] {
			return nil, false
		}
		v, ok := vals[i].(*graph.Value)
		if !ok {
			return nil, false
		}
		kv, isConst := constOf(v)
		if !isConst || !foldableConst(kv) {
			// a value from outside the If is usable as is when it is the
			// only branch that falls through
			if definedIn(v, blocks[i]) {
				return nil, false
			}
			outer = v
			n += 2 // not mergeable with a constant of the other branch
			continue
		}
		if n == 1 && !(kv.Kind() == k.Kind() && kv.Equal(k) && v.Type.Equal(t)) {
			return nil, false
		}
		k, t = kv, v.Type
		n++
	}
	switch {
	case outer != nil && n == 2:
		return outer, true
	case outer == nil && n >= 1:
		return c.constant(k, t), true
	}
	return nil, false
}

// foldableConst: scalars and strings, whose equality is their identity
// (tensors and containers are compared by identity in TorchScript).
func foldableConst(v ivalue.IValue) bool {
	switch v.Kind() {
	case ivalue.KindNone, ivalue.KindInt, ivalue.KindDouble, ivalue.KindBool, ivalue.KindString, ivalue.KindDevice:
		return true
	}
	return false
}

// definedIn reports whether v is produced inside block b (or a block
// nested in it).
func definedIn(v *graph.Value, b *graph.Block) bool {
	if v.Node == nil {
		return false
	}
	for blk := v.Node.Owner; blk != nil; {
		if blk == b {
			return true
		}
		if blk.Owner == nil {
			return false
		}
		blk = blk.Owner.Owner
	}
	return false
}
