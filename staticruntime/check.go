package staticruntime

import (
	"fmt"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// A Gap is an op of a graph that gosr's Go kernels cannot run: every node
// of that kind and signature, where the model's code made them.
type Gap struct {
	Op        string   // the node kind, e.g. "aten::lstm"
	Signature string   // ops.NodeSignature of the first such node
	Sources   []string // each node's source range ("code/...py:12:5"), in graph order; "" where none was recorded
	Reason    string   // what the registry said
	// Backend names the kernel backend (Options.Backend, e.g. "libtorch")
	// that has a kernel for it; with BackendMode auto or libtorch the
	// node runs there instead. Empty when no backend was given or it has
	// none.
	Backend string
}

// Check runs the same passes NewStaticModule would on g (which it takes
// over) and lists every op, in every block and forked subgraph, that has
// no Go kernel, where NewStaticModule stops at the first. With
// opts.Backend set it also asks the backend about each gap. A kernel
// found here may still refuse an argument at run time (an unsupported
// mode, a dtype); Check does not run the graph. The error is for a graph
// that cannot be prepared at all (invalid, or a pass failed).
func Check(g *graph.Graph, opts *Options) (gaps []Gap, err error) {
	defer func() {
		if r := recover(); r != nil {
			gaps, err = nil, fmt.Errorf("staticruntime: checking graph: internal error: %v", r)
		}
	}()
	o := DefaultOptions()
	if opts != nil {
		o = *opts
	}
	if err := g.Verify(); err != nil {
		return nil, fmt.Errorf("staticruntime: invalid graph: %w", err)
	}
	if err := runPasses(g, o, ivalue.Device{}); err != nil {
		return nil, err
	}
	sel := ops.Options{DisableOutVariants: !o.EnableOutVariant}
	byKey := map[string]int{}
	var walk func(b *graph.Block, depth int) error
	walk = func(b *graph.Block, depth int) error {
		if depth > maxCheckDepth {
			return fmt.Errorf("staticruntime: blocks and forked subgraphs nested deeper than %d levels", maxCheckDepth)
		}
		for _, n := range b.Nodes {
			if n.Kind == graph.KindConstant {
				continue
			}
			if _, _, err := ops.Select(n, sel); err != nil {
				sig := ops.NodeSignature(n)
				key := n.Kind + "\x00" + sig
				i, ok := byKey[key]
				if !ok {
					i = len(gaps)
					byKey[key] = i
					gap := Gap{Op: n.Kind, Signature: sig, Reason: err.Error()}
					if o.Backend != nil {
						if k, _, berr := o.Backend.Kernel(n, ivalue.Device{}); berr == nil && k != nil {
							gap.Backend = o.Backend.Name()
						}
					}
					gaps = append(gaps, gap)
				}
				gaps[i].Sources = append(gaps[i].Sources, n.SourceRange)
			}
			for _, sb := range n.Blocks {
				if err := walk(sb, depth+1); err != nil {
					return err
				}
			}
			if n.Kind == graph.KindFork {
				if sg := graph.Subgraph(n); sg != nil {
					if err := runPasses(sg, o, ivalue.Device{}); err != nil {
						return fmt.Errorf("staticruntime: the subgraph of %s: %w", describe(n), err)
					}
					if err := walk(sg.Block, depth+1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(g.Block, 0); err != nil {
		return nil, err
	}
	return gaps, nil
}

// maxCheckDepth bounds Check's walk through nested blocks and forks.
const maxCheckDepth = 10000

// String is one line: the op, its signature, how many nodes and where.
func (g Gap) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d node(s), %s", g.Op, len(g.Sources), g.Signature)
	if g.Backend != "" {
		fmt.Fprintf(&b, " [%s has it]", g.Backend)
	}
	return b.String()
}
