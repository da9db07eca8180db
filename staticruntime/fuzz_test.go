package staticruntime_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// FuzzPrepareAndRun: any text the parser accepts either fails to prepare
// or runs, with tensor arguments for tensor inputs, without an internal
// error (a recovered panic), and a second run behaves like the first.
func FuzzPrepareAndRun(f *testing.F) {
	for _, ir := range []string{mulReluChain(2), loopIfIR} {
		f.Add(ir)
	}
	if cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models")); err == nil {
		for _, c := range cases {
			if len(c.Consts) == 0 {
				f.Add(c.IR)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := graph.Parse(src, nil)
		if err != nil {
			return
		}
		m, err := staticruntime.NewStaticModule(g, nil)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("NewStaticModule: %v", err)
			}
			return
		}
		args := make([]ivalue.IValue, m.NumInputs())
		for i, ty := range m.Graph().Inputs() {
			switch ty.Type.Kind {
			case graph.IntType:
				args[i] = ivalue.FromInt(2)
			case graph.BoolType:
				args[i] = ivalue.FromBool(true)
			case graph.FloatType:
				args[i] = ivalue.FromDouble(0.5)
			default:
				args[i] = ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3, 0.5}, 2, 2))
			}
		}
		r := m.NewRuntime()
		for rep := 0; rep < 2; rep++ {
			if _, err := r.Run(args...); err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("run %d: %v", rep, err)
			}
		}
	})
}
