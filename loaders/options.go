package loaders

import (
	"fmt"

	"github.com/gosr/gosr/graph"
)

// Options bound what reading an archive may cost, so that a hostile or
// broken file gets an error instead of the process's memory: what a file
// claims (sizes in its headers and pickles) never drives an allocation
// beyond what the file really holds or these limits allow. A nil
// *Options, and a zero field, mean the default; a negative field means no
// limit. The defaults load every model of the compatibility suite with a
// wide margin (docs/limits.md gives the figures).
type Options struct {
	// MaxEntrySize bounds the bytes one compressed (deflated) zip entry
	// inflates to. Default 64 MiB. PyTorch deflates only TorchScript code
	// (and its debug tables); tensor records are stored, and a stored
	// record is a view of the file, bounded by the file's size and costing
	// no memory of its own. An archive repacked with its tensors deflated
	// needs this raised to its largest tensor.
	MaxEntrySize int64
	// MaxCompressionRatio bounds a deflated entry's size over its
	// compressed size, for entries that inflate beyond 1 MiB (smaller ones
	// cannot amplify much whatever their ratio). Default 200: TorchScript
	// code compresses about 10:1, deflate reaches 1032:1 on repeated bytes.
	MaxCompressionRatio int
	// MaxPickleItems bounds, for each pickle, the unpickler's stack and its
	// memo (each), and the values converted from it (shared tuples count
	// each time they are reached, so that a pickle cannot expand
	// exponentially). The bound applied is the smaller of this and the
	// pickle's size in bytes plus 4096. Default 1<<20 (1,048,576: about
	// 100 MB of stack and memo at most); the
	// pickles of the compatibility suite need at most 4,324 (values) and
	// 3,796 (memo entries).
	MaxPickleItems int
	// MaxCodeSize bounds the total size of the TorchScript code read from
	// an archive (its code/ entries, inflated). Default 4 MiB, ten times
	// the largest model of the compatibility suite (390 KB, maxvit_t
	// traced): compiling takes 65 to 185 bytes of memory per byte of code.
	MaxCodeSize int64
	// MaxGraphNodes bounds the nodes of a compiled graph (nodes of
	// sub-blocks and forked subgraphs included), checked after compiling
	// and before the graph goes anywhere else. Default 1,000,000; the
	// largest model of the compatibility suite has 8,021 (swin_v2_t).
	MaxGraphNodes int
}

// Defaults of Options.
const (
	DefaultMaxEntrySize        = 64 << 20
	DefaultMaxCompressionRatio = 200
	DefaultMaxPickleItems      = 1 << 20
	DefaultMaxCodeSize         = 4 << 20
	DefaultMaxGraphNodes       = 1_000_000

	// ratioExempt: entries inflating to at most this many bytes are not
	// held to MaxCompressionRatio.
	ratioExempt = 1 << 20
	// pickleItemsSlack is added to a pickle's size for its item bound.
	pickleItemsSlack = 4096
)

// limits are Options resolved: every field set, negative for no limit.
type limits struct{ Options }

func (o *Options) limits() limits {
	var l limits
	if o != nil {
		l.Options = *o
	}
	set := func(p *int64, def int64) {
		if *p == 0 {
			*p = def
		}
	}
	seti := func(p *int, def int) {
		if *p == 0 {
			*p = def
		}
	}
	set(&l.MaxEntrySize, DefaultMaxEntrySize)
	seti(&l.MaxCompressionRatio, DefaultMaxCompressionRatio)
	seti(&l.MaxPickleItems, DefaultMaxPickleItems)
	set(&l.MaxCodeSize, DefaultMaxCodeSize)
	seti(&l.MaxGraphNodes, DefaultMaxGraphNodes)
	return l
}

// pickleItems is the item bound for a pickle of n bytes (see
// Options.MaxPickleItems).
func (l limits) pickleItems(n int) int {
	b := n + pickleItemsSlack
	if l.MaxPickleItems >= 0 {
		b = min(b, l.MaxPickleItems)
	}
	return max(b, 1)
}

// codeBudget counts the code an archive's compile reads against
// MaxCodeSize, each entry once, before it is inflated.
type codeBudget struct {
	a    *Archive
	left int64 // negative: no limit
	seen map[string]bool
}

func newCodeBudget(a *Archive) *codeBudget {
	return &codeBudget{a: a, left: a.lim.MaxCodeSize, seen: map[string]bool{}}
}

// read returns the record after charging its declared size (the zip
// reader never inflates beyond it).
func (c *codeBudget) read(rec string, read func(string) ([]byte, error)) ([]byte, error) {
	if !c.seen[rec] && c.left >= 0 {
		n := c.a.size(rec)
		if n > c.left {
			return nil, fmt.Errorf("archive %s: entry %q: the code read so far plus this entry's %d bytes exceed the code limit of %d bytes (Options.MaxCodeSize)", c.a.Name(), rec, n, c.a.lim.MaxCodeSize)
		}
		c.left -= n
	}
	c.seen[rec] = true
	return read(rec)
}

// checkGraphSize counts g's nodes (sub-blocks and forked subgraphs
// included) against MaxGraphNodes, stopping as soon as they exceed it.
func checkGraphSize(g *graph.Graph, max int) error {
	if max < 0 {
		return nil
	}
	n := 0
	var over bool
	var walk func(g *graph.Graph)
	walk = func(g *graph.Graph) {
		g.Walk(func(nd *graph.Node) {
			if over {
				return
			}
			if n++; n > max {
				over = true
				return
			}
			if sg := graph.Subgraph(nd); sg != nil {
				walk(sg)
			}
		})
	}
	walk(g)
	if over {
		return fmt.Errorf("the compiled graph has more than %d nodes (Options.MaxGraphNodes)", max)
	}
	return nil
}
