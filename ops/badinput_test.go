package ops_test

import (
	"fmt"
	"path/filepath"
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
				for name, bad := range fixture.BadVariants(in.Tensor()) {
					args := append([]ivalue.IValue(nil), c.Inputs...)
					args[i] = ivalue.FromTensor(bad)
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
