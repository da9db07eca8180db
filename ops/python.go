package ops

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/graph"
)

// PythonCallOp is the op a Python fallback node calls: the first input
// is the constant "pkg.mod:qualname" of a function packaged beside the
// model (scripts/gosr_fallback.py records it at export time). When two
// fallbacks share argument types but not results, the exporter numbers
// the op (python_call_2, ...), since TorchScript picks overloads by
// arguments alone.
const PythonCallOp = "gosr::python_call"

// IsPythonCall reports whether n calls packaged Python.
func IsPythonCall(n *graph.Node) bool {
	k := n.Kind
	return k == PythonCallOp || (len(k) > len(PythonCallOp)+1 && k[:len(PythonCallOp)+1] == PythonCallOp+"_")
}

// PythonCaller runs one python_call node: it converts the inputs after
// the function name, calls the function in a Python interpreter and sets
// the outputs. The runtime puts one in the node's State.
type PythonCaller interface {
	CallPython(p *ProcessedNode) error
}

// PythonBackend makes the callers of a module's python_call nodes, one
// per node per runtime (pyfallback.Package is one). ctx returns the
// current run's context, which interrupts the Python call.
type PythonBackend interface {
	NewPythonCaller(n *graph.Node, ctx func() context.Context) (PythonCaller, error)
}

// PythonCallerError is the State of a python_call node whose caller
// could not be made; the kernel returns it.
type PythonCallerError struct{ Err error }

func init() {
	build := func(n *graph.Node) Kernel {
		if len(n.Inputs) == 0 {
			return nil
		}
		if _, ok := graph.ConstantValue(n.Inputs[0]); !ok {
			return nil
		}
		return func(p *ProcessedNode) error {
			switch c := p.State.(type) {
			case PythonCaller:
				return c.CallPython(p)
			case PythonCallerError:
				return c.Err
			}
			return Errorf("%s calls packaged Python: load the model with pyfallback (Manager.LoadPackage, then Package.Module) or set staticruntime.Options.Python", p.Node.Kind)
		}
	}
	RegisterFallback(PythonCallOp, build)
	for i := 2; i <= 16; i++ {
		RegisterFallback(fmt.Sprintf("%s_%d", PythonCallOp, i), build)
	}
}
