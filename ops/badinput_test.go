package ops_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestOpsBadInputs feeds every op case inputs of the wrong rank, size and
// dtype. Each run must either succeed or return an error; a kernel that
// panics (caught by the runtime as an "internal error") fails the test,
// and the runtime must still give PyTorch's answer afterwards.
func TestOpsBadInputs(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "testdata", "ops"))
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
			require.NoError(t, err)
			m, err := staticruntime.NewStaticModule(g, nil)
			require.NoError(t, err)
			r := m.NewRuntime()
			for i, in := range c.Inputs {
				// In name order: map order made a failure depend on which
				// bad input ran first.
				bad := fixture.BadVariants(in.Tensor())
				for _, name := range slices.Sorted(maps.Keys(bad)) {
					args := append([]ivalue.IValue(nil), c.Inputs...)
					args[i] = ivalue.FromTensor(bad[name])
					_, err := r.Run(args...)
					if err != nil && strings.Contains(err.Error(), "internal error") {
						t.Errorf("input %d %s: kernel panicked: %s", i, name, firstLine(err))
					}
				}
			}
			outs, err := r.Run(c.Inputs...)
			require.NoError(t, err, "after bad inputs")
			checkOutputs(t, c, outs, "after bad inputs")
		})
	}
}

func firstLine(err error) string {
	s := fmt.Sprint(err)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestOpsBadInputOrders runs the in-place and view cases after every
// ordered pair of bad inputs (and after each alone) on a fresh runtime,
// then the good input. Which bad inputs ran before used to decide whether
// one panicked: relu_ on an empty slice of an empty tensor (offset past
// its storage's end) panicked unless an earlier, larger input had left
// the storage big enough to hide it.
func TestOpsBadInputOrders(t *testing.T) {
	for _, name := range []string{
		"inplace_view", "inplace_chain", "inplace_broadcast",
		"inplace_copy_zero", "inplace_int64", "inplace_loop",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := fixture.Load(filepath.Join("..", "testdata", "ops", name+".ir"))
			require.NoError(t, err)
			g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
			require.NoError(t, err)
			m, err := staticruntime.NewStaticModule(g, nil)
			require.NoError(t, err)
			for i, in := range c.Inputs {
				bad := fixture.BadVariants(in.Tensor())
				names := slices.Sorted(maps.Keys(bad))
				// "" is no first input: each bad input alone.
				for _, first := range append([]string{""}, names...) {
					for _, second := range names {
						order := fmt.Sprintf("input %d: %q then %q", i, first, second)
						r := m.NewRuntime()
						for _, n := range []string{first, second} {
							if n == "" {
								continue
							}
							args := append([]ivalue.IValue(nil), c.Inputs...)
							args[i] = ivalue.FromTensor(bad[n])
							if _, err := r.Run(args...); err != nil {
								require.NotContains(t, err.Error(), "internal error", "%s: %s panicked", order, n)
								require.Contains(t, err.Error(), "node %", "%s: %s: the error names no node", order, n)
							}
						}
						outs, err := r.Run(c.Inputs...)
						require.NoError(t, err, order)
						checkOutputs(t, c, outs, order)
					}
				}
			}
		})
	}
}
