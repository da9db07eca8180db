package ops

import (
	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Forker starts the task of one prim::fork node. The runtime puts one in
// the node's State: it owns the forked subgraph's prepared module, the
// runtimes that run it and the launcher of the current run.
type Forker interface {
	Fork(p *ProcessedNode) (*fork.Future, error)
}

func init() {
	// prim::fork: start the subgraph's task on the run's launcher and
	// return its future at once.
	RegisterNative(graph.KindFork, func(n *graph.Node) Kernel {
		if graph.Subgraph(n) == nil || len(n.Outputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			f, ok := p.State.(Forker)
			if !ok {
				return Errorf("prim::fork needs a runtime that runs forked subgraphs (none was set up for this node)")
			}
			fut, err := f.Fork(p)
			if err != nil {
				return err
			}
			p.SetOutput(0, ivalue.Object(fut))
			return nil
		}
	}, MetadataOnly)
	// aten::wait(Future(t) self) -> t: block until the task is done and
	// re-raise its error.
	RegisterNative(graph.KindWait, func(n *graph.Node) Kernel {
		if len(n.Inputs) != 1 || len(n.Outputs) != 1 {
			return nil
		}
		return func(p *ProcessedNode) error {
			v := p.Input(0)
			fut, ok := v.Ref().(*fork.Future)
			if !ok || fut == nil {
				return Errorf("aten::wait expects a Future from prim::fork, got %s", v.Kind())
			}
			vals, err := fut.Wait(fut.Context())
			if err != nil {
				return err
			}
			if len(vals) != 1 {
				return Errorf("aten::wait: the forked subgraph returned %d values, expected 1", len(vals))
			}
			p.SetOutput(0, vals[0])
			return nil
		}
	}, MetadataOnly)
}
