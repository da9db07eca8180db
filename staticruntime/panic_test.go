package staticruntime_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

var errKernelBug = errors.New("kernel bug")

// panicAt makes gosrtest::panic_at panic on its nth execution in a run
// (counting from 1), with an error, or with a string when its second
// input is true.
var panicAt, panicRuns atomic.Int64

func init() {
	ops.RegisterNative("gosrtest::panic_at", func(n *graph.Node) ops.Kernel {
		return func(p *ops.ProcessedNode) error {
			if panicRuns.Add(1) == panicAt.Load() {
				if p.Bool(1) {
					panic("kernel bug (string)")
				}
				panic(errKernelBug)
			}
			p.SetOutput(0, *p.Input(0))
			return nil
		}
	})
}

// TestKernelPanicNamesNode: a kernel that panics (a bug: kernels return
// errors) fails the run with an internal error naming the innermost node
// running, in the top block or a loop body, and the runtime's next run
// is right.
func TestKernelPanicNamesNode(t *testing.T) {
	const ir = `graph(%x : Tensor, %n : int, %str : bool):
  %true : bool = prim::Constant[value=1]()
  %a : Tensor = gosrtest::panic_at(%x, %str)
  %y : Tensor = prim::Loop(%n, %true, %a)
    block0(%i : int, %acc : Tensor):
      %m : Tensor = aten::mul(%acc, %acc)
      %b : Tensor = gosrtest::panic_at(%m, %str)
      -> (%true, %b)
  %z : Tensor = aten::relu(%y)
  return (%z)
`
	tests := []struct {
		name   string
		at     int64 // the execution of panic_at that panics
		str    bool
		node   string
		errBug bool
	}{
		{"top block", 1, false, "%a = gosrtest::panic_at", true},
		{"loop body, first trip", 2, false, "%b = gosrtest::panic_at", true},
		{"loop body, third trip", 4, true, "%b = gosrtest::panic_at", false},
	}
	for _, cancellable := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/cancellable=%v", tc.name, cancellable), func(t *testing.T) {
				r := prepare(t, ir, nil).NewRuntime()
				x := ivalue.FromTensor(ivalue.F32Tensor([]float32{2}, 1))
				args := []ivalue.IValue{x, ivalue.FromInt(3), ivalue.FromBool(tc.str)}
				run := func() ([]ivalue.IValue, error) {
					panicRuns.Store(0)
					if cancellable {
						return r.RunContext(t.Context(), args...)
					}
					return r.Run(args...)
				}
				panicAt.Store(tc.at)
				_, err := run()
				require.Error(t, err)
				msg := err.Error()
				assert.True(t, strings.HasPrefix(msg, "node "+tc.node), msg)
				assert.Contains(t, msg, "internal error: kernel bug")
				assert.Equal(t, tc.errBug, errors.Is(err, errKernelBug))
				var ne *staticruntime.NodeError
				require.ErrorAs(t, err, &ne)
				assert.Equal(t, "gosrtest::panic_at", ne.Op)
				panicAt.Store(0)
				outs, err := run()
				require.NoError(t, err)
				assert.Equal(t, []float32{256}, f32(t, outs[0]))
			})
		}
	}
}
