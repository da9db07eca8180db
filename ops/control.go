package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Control flow runs sub-blocks through the BlockRunners the runtime
// attaches to the node; they share the runtime's values array, so
// passing values in and out is a slot copy.
func init() {
	RegisterNative(graph.KindIf, func(n *graph.Node) Kernel {
		if len(n.Blocks) != 2 || len(n.Inputs) != 1 {
			return nil
		}
		return ifKernel
	}, MetadataOnly)
	RegisterNative(graph.KindLoop, func(n *graph.Node) Kernel {
		if len(n.Blocks) != 1 || len(n.Inputs) < 2 {
			return nil
		}
		return loopKernel
	}, MetadataOnly)
}

func ifKernel(p *ProcessedNode) error {
	c := p.Input(0)
	if c.Kind() != ivalue.KindBool {
		return Errorf("prim::If: expected a bool condition, got %s", c.Kind())
	}
	b := p.Blocks[1]
	if c.Bool() {
		b = p.Blocks[0]
	}
	if err := b.Run(); err != nil {
		return err
	}
	for i, s := range b.Outputs() {
		p.Values[p.Out[i]] = p.Values[s]
	}
	return nil
}

// loopKernel runs prim::Loop(max_trip_count, initial_condition, carried...)
// whose block takes (iteration, carried...) and returns (condition,
// carried...), as TorchScript defines it.
func loopKernel(p *ProcessedNode) error {
	b := p.Blocks[0]
	in, out := b.Inputs(), b.Outputs()
	v := p.Values
	maxTrip := v[p.In[0]]
	if maxTrip.Kind() != ivalue.KindInt {
		return Errorf("prim::Loop: expected an int trip count, got %s", maxTrip.Kind())
	}
	cond := v[p.In[1]]
	if cond.Kind() != ivalue.KindBool {
		return Errorf("prim::Loop: expected a bool condition, got %s", cond.Kind())
	}
	n := len(p.In) - 2
	for k := 0; k < n; k++ {
		v[in[k+1]] = v[p.In[k+2]]
	}
	goOn := cond.Bool()
	for i := int64(0); goOn && i < maxTrip.Int(); i++ {
		v[in[0]] = ivalue.FromInt(i)
		if err := b.Run(); err != nil {
			return err
		}
		c := v[out[0]]
		if c.Kind() != ivalue.KindBool {
			return Errorf("prim::Loop: body returned a %s condition, expected bool", c.Kind())
		}
		goOn = c.Bool()
		for k := 0; k < n; k++ {
			v[in[k+1]] = v[out[k+1]]
		}
	}
	for k := 0; k < n; k++ {
		v[p.Out[k]] = v[in[k+1]]
	}
	return nil
}
