package ops

import (
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// BlockRunner runs one sub-block of a control-flow node against the
// runtime's shared values array. A kernel sets the slots of Inputs, calls
// Run, then reads the slots of Outputs.
type BlockRunner interface {
	Inputs() []int32
	Outputs() []int32
	Run() error
}

// ProcessedNode is one node of a prepared graph as one runtime runs it:
// the kernel (shared by all runtimes) plus this runtime's view of the
// values array. Kernels see only this.
type ProcessedNode struct {
	// The fields every run touches come first, within two cache lines.
	Kernel Kernel
	// Values is the owning runtime's values array; In and Out index it.
	Values []ivalue.IValue
	In     []int32
	Out    []int32
	// Own holds, per output, the tensor object this node writes into
	// across runs (see OwnTensor).
	Own []*ivalue.Tensor
	// Spares hold, per output, a second tensor for nodes inside loops, so
	// a result carried into the next iteration alternates between two
	// objects instead of allocating (nil outside loops).
	Spares []*ivalue.Tensor
	// Fresh marks a node whose outputs may outlive one execution of its
	// block (a loop body's results carried or stored), so kernels must
	// not overwrite the objects of the previous execution.
	Fresh bool
	Kind  Kind
	// State is per-runtime scratch a kernel may keep between runs.
	State any
	// BackendState is State for a KernelBackend's kernel (kept apart so
	// that BackendAuto can run both kernels of a node).
	BackendState any
	Node         *graph.Node
	// Blocks are the runners of the node's sub-blocks (prim::If, prim::Loop).
	Blocks []BlockRunner
	// Guard lists further slots whose tensors this node must not
	// overwrite: the parameters of the enclosing loop bodies, which may
	// hold results of the previous iteration.
	Guard []int32
	// Scratch is shared by all nodes of one runtime (nil: kernels use
	// shared free lists). It carries the runtime's intra-op team
	// (Scratch.Team; staticruntime.Options.IntraOpThreads), which the
	// gemm calls made through it split large products across.
	Scratch *gemm.Scratch
	// Recycle, for a Fresh node, hands out a new tensor object per
	// execution within a run, reusing the objects of the previous run
	// (dead by then: outputs live until the next run). Nil means allocate.
	Recycle *Recycler
}

// Run executes the kernel.
func (p *ProcessedNode) Run() error { return p.Kernel(p) }

// NumInputs is the number of inputs.
func (p *ProcessedNode) NumInputs() int { return len(p.In) }

// NumOutputs is the number of outputs.
func (p *ProcessedNode) NumOutputs() int { return len(p.Out) }

// Input returns input i's slot.
func (p *ProcessedNode) Input(i int) *ivalue.IValue { return &p.Values[p.In[i]] }

// Output returns output i's slot.
func (p *ProcessedNode) Output(i int) *ivalue.IValue { return &p.Values[p.Out[i]] }

// SetOutput stores v in output slot i.
func (p *ProcessedNode) SetOutput(i int, v ivalue.IValue) { p.Values[p.Out[i]] = v }

// Tensor returns input i as a tensor, or nil if it holds none.
func (p *ProcessedNode) Tensor(i int) *ivalue.Tensor { return p.Values[p.In[i]].Tensor() }

// Int returns input i as an int.
func (p *ProcessedNode) Int(i int) int64 { return p.Values[p.In[i]].AsInt() }

// Float returns input i (int, float or bool) as a float64.
func (p *ProcessedNode) Float(i int) float64 { return p.Values[p.In[i]].AsFloat() }

// Bool returns input i as a bool.
func (p *ProcessedNode) Bool(i int) bool { return p.Values[p.In[i]].Bool() }

// IsNone reports whether input i is None.
func (p *ProcessedNode) IsNone(i int) bool { return p.Values[p.In[i]].IsNone() }

// IntsInto appends the elements of the int list at input i to buf[:0]
// and returns it; with a buffer of enough capacity it does not allocate.
func (p *ProcessedNode) IntsInto(i int, buf []int) []int {
	buf = buf[:0]
	v := p.Values[p.In[i]]
	if v.Kind() == ivalue.KindInt {
		return append(buf, int(v.Int()))
	}
	if l := v.List(); l != nil {
		for _, it := range l.Items {
			buf = append(buf, int(it.AsInt()))
		}
	}
	return buf
}

// OutTensor returns the tensor to write output i into: the one this node
// wrote on the previous run, reused, or a new empty one (first run, a
// Fresh node). A previous tensor that aliases one of this node's inputs
// or guarded slots (a loop-carried value) is swapped with the node's
// spare. Kernels then Resize it.
func (p *ProcessedNode) OutTensor(i int) *ivalue.Tensor {
	if p.Fresh {
		return p.FreshTensor(i)
	}
	t := p.OwnTensor(i)
	// Outside loops nothing live in this run aliases the node's own
	// tensor: it was written by this node on the previous run only.
	if p.Spares == nil || !p.aliasesInput(t) {
		return t
	}
	s := p.Spares[i]
	p.Spares[i] = t
	if s == nil || p.aliasesInput(s) {
		s = &ivalue.Tensor{}
	}
	p.Own[i] = s
	p.Values[p.Out[i]] = ivalue.FromTensor(s)
	return s
}

// OwnTensor returns the tensor object this node owns for output i
// (making it on first use) and puts it in the output slot. The slot
// itself may hold something else between runs: a native op such as
// aten::to passes its input through when there is nothing to do, and
// that tensor must never be written as if it were the node's own.
func (p *ProcessedNode) OwnTensor(i int) *ivalue.Tensor {
	if p.Own == nil {
		p.Own = make([]*ivalue.Tensor, len(p.Out))
	}
	t := p.Own[i]
	if t == nil {
		t = &ivalue.Tensor{}
		p.Own[i] = t
	}
	slot := &p.Values[p.Out[i]]
	if slot.Tensor() != t {
		*slot = ivalue.FromTensor(t)
	}
	return t
}

func (p *ProcessedNode) aliasesInput(t *ivalue.Tensor) bool {
	return p.aliasesSlots(t, p.In) || p.aliasesSlots(t, p.Guard)
}

func (p *ProcessedNode) aliasesSlots(t *ivalue.Tensor, slots []int32) bool {
	for _, in := range slots {
		v := &p.Values[in]
		if it := v.Tensor(); it != nil {
			if it == t || it.SharesStorage(t) {
				return true
			}
		} else if l := v.List(); l != nil {
			for k := range l.Items {
				if it := l.Items[k].Tensor(); it != nil && (it == t || it.SharesStorage(t)) {
					return true
				}
			}
		}
	}
	return false
}

// FreshTensor stores a tensor object not used before in this run in
// output slot i and returns it.
func (p *ProcessedNode) FreshTensor(i int) *ivalue.Tensor {
	var t *ivalue.Tensor
	if r := p.Recycle; r != nil {
		k := r.next[i]
		r.next[i]++
		if k < len(r.tensors[i]) {
			t = r.tensors[i][k]
		} else {
			t = &ivalue.Tensor{}
			r.tensors[i] = append(r.tensors[i], t)
		}
	} else {
		t = &ivalue.Tensor{}
	}
	p.Values[p.Out[i]] = ivalue.FromTensor(t)
	return t
}

// Recycler keeps the tensor objects a Fresh node handed out in one run
// for the next.
type Recycler struct {
	tensors [][]*ivalue.Tensor
	next    []int
}

// NewRecycler makes a recycler for a node of n outputs.
func NewRecycler(n int) *Recycler {
	return &Recycler{tensors: make([][]*ivalue.Tensor, n), next: make([]int, n)}
}

// Reset starts a new run.
func (r *Recycler) Reset() { clear(r.next) }

// Forget drops the objects handed out so far: they now belong to someone
// else (a caller keeping a run's outputs), and later runs make new ones.
func (r *Recycler) Forget() {
	clear(r.tensors)
	clear(r.next)
}

// OutList returns the list to fill for output i, reused across runs
// unless the node is Fresh; n is the number of items, which are kept
// (callers overwrite them).
func (p *ProcessedNode) OutList(i, n int, tuple bool) *ivalue.List {
	slot := &p.Values[p.Out[i]]
	l := slot.List()
	if l == nil || p.Fresh {
		l = &ivalue.List{Items: make([]ivalue.IValue, n)}
	} else if cap(l.Items) >= n {
		l.Items = l.Items[:n]
	} else {
		l.Items = make([]ivalue.IValue, n)
	}
	if tuple {
		*slot = ivalue.TupleOf(l)
	} else {
		*slot = ivalue.ListOf(l)
	}
	return l
}

// Errorf formats a kernel error. The runtime prefixes the node.
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
