package pyfallback

import (
	"context"
	"fmt"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// Module loads the package's scripted model (pickled at pkg/resource,
// "model"/"model.pkl" for archives from scripts/gosr_fallback.py) and
// prepares it with opts; its python_call nodes run in the manager's
// interpreters. The returned model's graph views the archive.
func (p *Package) Module(pkg, resource string, opts *staticruntime.Options) (*staticruntime.StaticModule, *loaders.Model, error) {
	model, err := p.arch.LoadScript(pkg, resource)
	if err != nil {
		return nil, nil, err
	}
	o := staticruntime.DefaultOptions()
	if opts != nil {
		o = *opts
	}
	o.Python = p
	sm, err := staticruntime.NewStaticModule(model.Graph, &o)
	if err != nil {
		return nil, nil, fmt.Errorf("package %s: %w", p.path, err)
	}
	return sm, model, nil
}

// NewPythonCaller implements ops.PythonBackend: one caller per node per
// runtime, so a runtime keeps its interpreter (affinity) and reuses its
// session and job between runs.
func (p *Package) NewPythonCaller(n *graph.Node, ctx func() context.Context) (ops.PythonCaller, error) {
	v, ok := graph.ConstantValue(n.Inputs[0])
	if !ok || v.Kind() != ivalue.KindString {
		return nil, fmt.Errorf("%s: the first input must be the constant function name", n.Kind)
	}
	c := &pyCaller{pkg: p, fn: v.Str(), ctx: ctx, hint: -1, nOut: len(n.Outputs), tensorOut: make([]bool, len(n.Outputs))}
	for i, o := range n.Outputs {
		c.tensorOut[i] = o.Type != nil && o.Type.Kind == graph.TensorType
	}
	if len(n.Outputs) == 1 {
		c.ret = pyType(n.Outputs[0].Type)
	} else {
		parts := make([]string, len(n.Outputs))
		for i, o := range n.Outputs {
			parts[i] = pyType(o.Type)
		}
		c.ret = "Tuple[" + strings.Join(parts, ", ") + "]"
	}
	c.s = Session{m: p.m, j: newJob()}
	c.run = c.runOn
	return c, nil
}

type pyCaller struct {
	pkg  *Package
	fn   string
	ret  string
	nOut int
	ctx  func() context.Context
	hint int
	s    Session
	p    *ops.ProcessedNode
	run  func(*interp) error
	// tensorOut marks the outputs typed Tensor: a tensor result is
	// copied into the node's own tensor (ProcessedNode.OutTensor), which
	// the next run reuses, as an out variant's.
	tensorOut []bool
	// The last interpreter's function and return-type string (both
	// borrowed: the package's and the interpreter's): most calls go to
	// the same interpreter.
	lastIn         *interp
	lastF, lastRet uintptr
	args           []ivalue.IValue // the call's arguments, reused
}

func (c *pyCaller) CallPython(p *ops.ProcessedNode) error {
	m := c.pkg.m
	ctx := c.ctx()
	if err := m.acquire(ctx, c.hint, &c.s); err != nil {
		return fmt.Errorf("python %s: %w", c.fn, err)
	}
	c.hint = c.s.idx
	c.p = p
	err := c.s.in.do(ctx, c.s.j, c.run)
	c.s.in.load.Add(-1)
	c.p = nil
	if err != nil {
		return fmt.Errorf("python %s (interpreter %d): %w", c.fn, c.s.idx, err)
	}
	return nil
}

func (c *pyCaller) runOn(in *interp) error {
	p := c.p
	if c.lastIn != in {
		f, err := c.pkg.resolve(in, c.fn)
		if err != nil {
			return err
		}
		c.lastIn, c.lastF, c.lastRet = in, f, in.strConst(c.ret)
	}
	for i := 1; i < p.NumInputs(); i++ {
		c.args = append(c.args, *p.Input(i))
	}
	r, err := in.invokeObj(c.lastF, c.lastRet, c.args, 1)
	clear(c.args) // references only for the call
	c.args = c.args[:0]
	if err != nil {
		return err
	}
	defer in.decref(r)
	cc := in.c
	if c.nOut == 1 {
		return c.setOutput(in, 0, r)
	}
	for i := 0; i < c.nOut; i++ {
		if err := c.setOutput(in, i, in.call(cc.PyTuple_GetItem, r, uintptr(i))); err != nil {
			return fmt.Errorf("result %d: %w", i, err)
		}
	}
	return nil
}

// setOutput converts result o (borrowed) into output i.
func (c *pyCaller) setOutput(in *interp, i int, o uintptr) error {
	if c.tensorOut[i] && typeOf(o) == in.outType {
		_, err := in.outTensor(o, c.p.OutTensor(i))
		return err
	}
	v, err := in.fromPy(o, c.s.lease)
	if err != nil {
		return err
	}
	c.p.SetOutput(i, v)
	return nil
}

// pyType writes a graph type the way _gosr's converters read it
// (Python's typing spelling).
func pyType(t *graph.Type) string {
	if t == nil {
		return "Any"
	}
	switch t.Kind {
	case graph.TensorType:
		return "Tensor"
	case graph.IntType, graph.ScalarTypeType, graph.LayoutType, graph.MemoryFormatType:
		return "int"
	case graph.FloatType:
		return "float"
	case graph.BoolType:
		return "bool"
	case graph.StringType, graph.DeviceType:
		return "str"
	case graph.NoneType:
		return "NoneType"
	case graph.ListType:
		return "List[" + pyType(t.Elem()) + "]"
	case graph.OptionalType:
		return "Optional[" + pyType(t.Elem()) + "]"
	case graph.TupleType:
		parts := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			parts[i] = pyType(e)
		}
		return "Tuple[" + strings.Join(parts, ", ") + "]"
	case graph.DictType:
		return "Dict[" + pyType(t.Elems[0]) + ", " + pyType(t.Elems[1]) + "]"
	}
	return "Any"
}
