// Package ops is gosr's op registry and its pure-Go kernels.
//
// An op registers a builder per kind of node: the builder looks at a
// graph node (its schema, its constant inputs) and returns a Kernel, or
// nil when it does not handle that overload. At preparation the runtime
// asks, for each node, the out-variant builders first, then the native
// ones, then the fallbacks, as PyTorch's Static Runtime does with
// REGISTER_OPERATOR_FUNCTOR and REGISTER_NATIVE_OPERATOR_FUNCTOR.
package ops

import (
	"fmt"
	"sort"
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Kind says how an op's kernel treats its outputs.
type Kind uint8

const (
	// OutVariant kernels write tensor outputs into tensors the runtime
	// owns and reuses across runs (so the memory planner can manage them).
	OutVariant Kind = iota
	// Native kernels produce views, scalars, lists: outputs the planner
	// cannot manage.
	Native
	// Fallback kernels compute functionally, allocating their outputs
	// on every run.
	Fallback
)

func (k Kind) String() string {
	switch k {
	case OutVariant:
		return "out variant"
	case Native:
		return "native"
	case Fallback:
		return "fallback"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Kernel runs one processed node. It reads inputs and writes outputs
// through p, and returns an error (never panics) on bad input; the runtime
// adds the node to the message.
type Kernel func(p *ProcessedNode) error

// Builder returns the kernel for node n, or nil if it does not handle n's
// overload. A builder runs once per node at preparation; what it decides
// from the node (which overload, constant arguments) is captured in the
// returned closure, which all runtimes share and must not mutate.
type Builder func(n *graph.Node) Kernel

// Trait is a property of a builder's kernels that Select needs beyond
// their Kind.
type Trait uint8

const (
	// MetadataOnly marks kernels that read and write no tensor elements:
	// they look only at sizes, strides, dtype and device (aten::size,
	// aten::dim) or pass tensors along inside values (lists, tuples,
	// dicts, control flow, fork and wait). On a device, whose memory Go
	// must not touch, only such Go kernels may take the module's tensors;
	// an unmarked kernel is taken to read them (the safe default).
	MetadataOnly Trait = 1 << iota
)

type entry struct {
	kind   Kind
	build  Builder
	traits Trait
}

var (
	mu       sync.RWMutex
	registry = map[string][]entry{}
)

// Register adds a builder for op (a qualified name such as "aten::add").
// Several builders may register for one op; each handles the overloads
// it recognises. traits describe every kernel the builder returns.
func Register(op string, kind Kind, b Builder, traits ...Trait) {
	var t Trait
	for _, x := range traits {
		t |= x
	}
	mu.Lock()
	defer mu.Unlock()
	registry[op] = append(registry[op], entry{kind, b, t})
}

// RegisterOut registers an out-variant builder.
func RegisterOut(op string, b Builder, traits ...Trait) { Register(op, OutVariant, b, traits...) }

// RegisterNative registers a native builder.
func RegisterNative(op string, b Builder, traits ...Trait) { Register(op, Native, b, traits...) }

// RegisterFallback registers a fallback builder.
func RegisterFallback(op string, b Builder, traits ...Trait) { Register(op, Fallback, b, traits...) }

// Options restrict the choice of kernel.
type Options struct {
	// DisableOutVariants makes Select skip out-variant builders, as
	// StaticModuleOptions.enable_out_variant = false does.
	DisableOutVariants bool
	// Backend, with BackendMode other than BackendGo, offers other
	// kernels (package libtorch).
	Backend     KernelBackend
	BackendMode BackendMode
	// AutoTable, if set, records BackendAuto's nodes for reporting.
	AutoTable *AutoTable
	// Device is where the module's tensors live. Off the host, the
	// Backend runs every tensor op it has (see selectOnDevice).
	Device ivalue.Device
	// HostTensors, off the host, collects the values whose tensors Go
	// kernels make on the host (prim::NumToTensor's), which later Go
	// kernels may read. Select fills it, so nodes must come in program
	// order; nil: Go reads no tensor of a device module.
	HostTensors map[*graph.Value]bool
}

// Select picks the kernel for n: out variant, then native, then fallback.
// A node nothing handles is an error naming the op and its schema.
func Select(n *graph.Node, opts Options) (Kernel, Kind, error) {
	g, err := selectGo(n, opts)
	if opts.Backend == nil || opts.BackendMode == BackendGo {
		if !opts.Device.IsHost() {
			return nil, 0, fmt.Errorf("device %s needs a kernel backend (gosr's Go kernels read host memory only)", opts.Device)
		}
		return g.k, g.kind, err
	}
	return selectWithBackend(n, opts, g, err)
}

// goChoice is the Go kernel Select found for a node (k nil: none).
type goChoice struct {
	k      Kernel
	kind   Kind
	traits Trait
}

func selectGo(n *graph.Node, opts Options) (goChoice, error) {
	mu.RLock()
	es := registry[n.Kind]
	mu.RUnlock()
	for _, want := range []Kind{OutVariant, Native, Fallback} {
		if want == OutVariant && opts.DisableOutVariants {
			continue
		}
		for _, e := range es {
			if e.kind != want {
				continue
			}
			if k := e.build(n); k != nil {
				return goChoice{k, want, e.traits}, nil
			}
		}
	}
	// With out variants disabled, an out-variant kernel still runs as the
	// fallback: the runtime gives it fresh outputs on every run, as the
	// JIT interpreter's ops allocate theirs.
	if opts.DisableOutVariants {
		for _, e := range es {
			if e.kind != OutVariant {
				continue
			}
			if k := e.build(n); k != nil {
				return goChoice{k, Fallback, e.traits}, nil
			}
		}
	}
	// What is supported: the op's overloads that have kernels are in the
	// registry, not in one place to print; say where to look instead.
	const hint = "`srbench check` lists every such op of a model; with the libtorch backend (-backend auto) it runs there"
	if len(es) == 0 {
		return goChoice{}, fmt.Errorf("no implementation of %s: unknown op (node %s); %s", n.Kind, NodeSignature(n), hint)
	}
	return goChoice{}, fmt.Errorf("no implementation of %s for this overload: %s (gosr's kernels take other argument types or values); %s", n.Kind, NodeSignature(n), hint)
}

// Registered lists the registered op names, sorted.
func Registered() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for k := range registry {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// NodeSignature renders a node's call with its input and output types,
// for error messages: "aten::add(Tensor, int, int) -> Tensor".
func NodeSignature(n *graph.Node) string {
	s := n.Kind + "("
	for i, in := range n.Inputs {
		if i > 0 {
			s += ", "
		}
		s += in.Type.String()
	}
	s += ") -> ("
	for i, o := range n.Outputs {
		if i > 0 {
			s += ", "
		}
		s += o.Type.String()
	}
	return s + ")"
}
