package alias

import (
	"strings"

	"github.com/gosr/gosr/graph"
)

// transfer adds what node n (d.nodes[ni]) implies to the points-to sets.
func (d *DB) transfer(ni int, n *graph.Node) {
	in := func(i int) locSet {
		if i < len(n.Inputs) {
			return d.ptsOf(n.Inputs[i])
		}
		return nil
	}
	switch n.Kind {
	case graph.KindFork:
		// The task reads (and may write) its inputs until it is waited
		// on, on another goroutine: they escape, as into an unknown op.
		d.unknown(n)
		return
	case graph.KindWait:
		// The result may be any input of the fork, anything they hold,
		// or new memory of the task's runtime.
		for _, o := range n.Outputs {
			d.pointSet(o, in(0))
			d.pointSet(o, d.contentsOf(in(0)))
			d.point(o, wildcard)
		}
		return
	case graph.KindConstant, graph.KindUninitialized:
		for _, o := range n.Outputs {
			d.freshLoc(o)
		}
		return
	case graph.KindListConstruct, graph.KindTupleConstruct, graph.KindDictConstruct:
		if len(n.Outputs) != 1 {
			break
		}
		l := d.freshLoc(n.Outputs[0])
		d.addContents(single(l), d.setOf(n.Inputs...))
		return
	case graph.KindListUnpack, graph.KindTupleUnpack, "prim::TupleIndex", "prim::DictIndex",
		"static_runtime::VarTupleUnpack", "static_runtime::dict_unpack":
		if len(n.Inputs) == 0 {
			break
		}
		if n.Kind == "static_runtime::VarTupleUnpack" {
			elems := d.contentsOf(d.setOf(n.Inputs...))
			for _, o := range n.Outputs {
				d.pointSet(o, elems)
			}
			return
		}
		elems := d.contentsOf(in(0))
		for _, o := range n.Outputs {
			d.pointSet(o, elems)
		}
		return
	case "prim::TupleSlice", "aten::list", "aten::copy", "aten::values", "aten::keys", "aten::items", "aten::dict":
		// A new container holding the same elements.
		if len(n.Inputs) == 0 || len(n.Outputs) != 1 || !isContainer(n.Inputs[0].Type) {
			break
		}
		l := d.freshLoc(n.Outputs[0])
		elems := d.contentsOf(in(0))
		if n.Kind == "aten::items" {
			// A list of (key, value) tuples: model each tuple as the dict.
			elems = in(0)
		}
		d.addContents(single(l), elems)
		return
	case "aten::__getitem__", "aten::get", "aten::pop", "aten::setdefault", "aten::popitem":
		if len(n.Inputs) == 0 || !isContainer(n.Inputs[0].Type) {
			break
		}
		c := in(0)
		switch n.Kind {
		case "aten::pop", "aten::popitem":
			d.write(c)
		case "aten::setdefault":
			d.write(c)
			d.addContents(c, d.setOf(n.Inputs[1:]...))
		}
		elems := d.contentsOf(c)
		if n.Kind == "aten::get" && len(n.Inputs) > 2 {
			elems = union(elems, in(2))
		}
		for _, o := range n.Outputs {
			if n.Kind == "aten::popitem" {
				d.freshLoc(o)
				d.addContents(d.ptsOf(o), elems)
				continue
			}
			d.pointSet(o, elems)
		}
		return
	case "aten::append", "aten::_set_item", "aten::insert", "aten::__setitem__":
		if len(n.Inputs) < 2 || !isContainer(n.Inputs[0].Type) {
			break
		}
		c := in(0)
		d.write(c)
		d.addContents(c, d.setOf(n.Inputs[1:]...))
		for _, o := range n.Outputs {
			d.pointSet(o, c)
		}
		return
	case "aten::extend", "aten::add_", "aten::update":
		if len(n.Inputs) < 2 || !isContainer(n.Inputs[0].Type) {
			break
		}
		c := in(0)
		d.write(c)
		d.addContents(c, d.contentsOf(in(1)))
		for _, o := range n.Outputs {
			d.pointSet(o, c)
		}
		return
	case graph.KindGetAttr:
		for _, o := range n.Outputs {
			d.point(o, wildcard)
		}
		return
	case "prim::SetAttr":
		d.write(in(0))
		if len(n.Inputs) > 1 {
			d.markWild(d.closure(in(1)))
		}
		return
	case graph.KindIf:
		for i, o := range n.Outputs {
			for _, b := range n.Blocks {
				if i < len(b.Outputs()) {
					d.pointSet(o, d.ptsOf(b.Outputs()[i]))
				}
			}
		}
		return
	case graph.KindLoop:
		if len(n.Blocks) != 1 {
			break
		}
		b := n.Blocks[0]
		// Carried value i: node input i+2, block param i+1, block return
		// i+1, node output i.
		for i := 0; i+2 < len(n.Inputs); i++ {
			s := in(i + 2)
			if i+1 < len(b.Outputs()) {
				s = union(s, d.ptsOf(b.Outputs()[i+1]))
			}
			if i+1 < len(b.Inputs()) {
				d.pointSet(b.Inputs()[i+1], s)
			}
			if i < len(n.Outputs) {
				d.pointSet(n.Outputs[i], s)
			}
		}
		return
	}
	if len(n.Blocks) == 0 {
		if viewLike[n.Kind] && len(n.Inputs) > 0 {
			for _, o := range n.Outputs {
				d.pointSet(o, in(0))
			}
			return
		}
		if listOfViews[n.Kind] && len(n.Inputs) > 0 {
			elems := in(0)
			if isContainer(n.Inputs[0].Type) { // broadcast_tensors, meshgrid
				elems = d.contentsOf(elems)
			}
			for _, o := range n.Outputs {
				d.freshLoc(o)
				d.addContents(d.ptsOf(o), elems)
			}
			return
		}
		if gosrFresh[n.Kind] || infoOf(n.Kind).fresh() || isCopyOp(n.Kind) {
			d.freshOutputs(n)
			return
		}
		if ms, ok := d.overloads(ni, n); ok {
			d.applySchemas(n, ms)
			return
		}
	}
	d.unknown(n)
}

func isCopyOp(kind string) bool {
	return strings.HasPrefix(kind, "static_runtime::") && strings.HasSuffix(kind, "_copy")
}

func isContainer(t *graph.Type) bool {
	switch t.Kind {
	case graph.ListType, graph.TupleType, graph.DictType, graph.AnyType:
		return true
	case graph.OptionalType:
		return isContainer(t.Elem())
	}
	return false
}

// freshOutputs gives n's outputs new locations; a container output may
// hold n's tensor inputs and the elements of its container inputs (an
// unannotated op returning a list, say unsafe_split, may return views).
func (d *DB) freshOutputs(n *graph.Node) {
	for _, o := range n.Outputs {
		d.freshLoc(o)
		if holdsMutable(o.Type) {
			d.addContents(d.ptsOf(o), d.inputsAndContents(n))
		}
	}
}

// holdsMutable reports whether a container of type t may hold mutable
// values (tensors, lists): an int[] from aten::size holds no tensor, so
// the tensor it was computed from does not escape into it.
func holdsMutable(t *graph.Type) bool {
	switch t.Kind {
	case graph.AnyType:
		return true
	case graph.ListType, graph.OptionalType:
		return t.Elem() == nil || Mutable(t.Elem()) && (t.Kind == graph.ListType || holdsMutable(t.Elem()))
	case graph.DictType, graph.TupleType:
		if len(t.Elems) == 0 {
			return true
		}
		for _, e := range t.Elems {
			if Mutable(e) {
				return true
			}
		}
	}
	return false
}

func (d *DB) inputsAndContents(n *graph.Node) locSet {
	var s locSet
	for _, v := range n.Inputs {
		p := d.ptsOf(v)
		if isContainer(v.Type) {
			p = d.contentsOf(p)
		}
		s = union(s, p)
	}
	return s
}

// applySchemas applies the union of the annotations of the overloads n
// may be a call of.
func (d *DB) applySchemas(n *graph.Node, ms []*opAlias) {
	aliased := make([]bool, len(n.Outputs))
	for _, m := range ms {
		for _, i := range m.writes {
			if i < len(n.Inputs) {
				d.write(d.ptsOf(n.Inputs[i]))
			}
		}
		for _, i := range m.escapes {
			if i < len(n.Inputs) {
				d.markWild(d.closure(d.ptsOf(n.Inputs[i])))
			}
		}
		for r, o := range n.Outputs {
			if r < len(m.points) {
				for _, i := range m.points[r] {
					if i < len(n.Inputs) {
						d.pointSet(o, d.ptsOf(n.Inputs[i]))
						aliased[r] = true
					}
				}
			}
			if r < len(m.elems) && len(m.elems[r]) > 0 {
				l := d.freshLoc(o)
				for _, i := range m.elems[r] {
					if i < len(n.Inputs) {
						d.addContents(single(l), d.ptsOf(n.Inputs[i]))
					}
				}
				aliased[r] = true
			}
			if r < len(m.wild) && m.wild[r] {
				d.point(o, wildcard)
				aliased[r] = true
			}
		}
	}
	for r, o := range n.Outputs {
		if !aliased[r] {
			d.freshLoc(o)
			if holdsMutable(o.Type) {
				d.addContents(d.ptsOf(o), d.inputsAndContents(n))
			}
		}
	}
}

// unknown handles an op the analysis does not know: its outputs may alias
// its inputs, their contents and anything external; it may write its
// inputs and store them anywhere.
func (d *DB) unknown(n *graph.Node) {
	ins := d.closure(d.setOf(n.Inputs...))
	d.write(ins)
	d.markWild(ins)
	for i, o := range n.Outputs {
		d.pointSet(o, ins)
		d.point(o, wildcard)
		for _, b := range n.Blocks {
			if i < len(b.Outputs()) {
				d.pointSet(o, d.ptsOf(b.Outputs()[i]))
			}
		}
	}
}

// overloads caches the schema matching of n (d.nodes[ni]) across
// fixpoint sweeps.
func (d *DB) overloads(ni int, n *graph.Node) ([]*opAlias, bool) {
	c := &d.ovl[ni]
	if !c.done {
		c.ms, c.ok = overloads(n)
		c.done = true
	}
	return c.ms, c.ok
}

type ovlEntry struct {
	ms   []*opAlias
	ok   bool
	done bool
}
