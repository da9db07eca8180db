package staticruntime_test

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// A graph as `print(torch.jit.freeze(torch.jit.script(m).eval()).graph)`
// shows it, with its tensor constants supplied beside the text.
func Example() {
	const ir = `graph(%self : __torch__.M,
      %x.1 : Tensor):
  %w : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %b : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %y : Tensor = aten::linear(%x.1, %w, %b)
  %z : Tensor = aten::relu(%y)
  return (%z)
`
	w := ivalue.F32Tensor([]float32{1, 0, -1, 0.5, 0.5, 0.5}, 2, 3)
	b := ivalue.F32Tensor([]float32{0, -10}, 2)
	g, err := graph.Parse(ir, &graph.ParseOptions{Tensors: []*ivalue.Tensor{w, b}})
	if err != nil {
		panic(err)
	}
	m, err := staticruntime.NewStaticModule(g, nil) // unused %self is dropped
	if err != nil {
		panic(err)
	}
	r := m.NewRuntime() // one per goroutine
	x := ivalue.F32Tensor([]float32{3, 2, 1}, 1, 3)
	outs, err := r.Run(ivalue.FromTensor(x))
	if err != nil {
		panic(err)
	}
	y := outs[0].Tensor() // valid until the next r.Run
	fmt.Println(y.Sizes(), y.F32Contig())

	// linear and the relu that alone reads it are one node
	// (gosr::linear_act, made by the FuseLinearAct pass), which writes
	// into memory it owns (an out variant) and clamps its result there.
	out, native, fallback := m.KindCounts()
	fmt.Println("out variant", out, "native", native, "fallback", fallback)
	// Output:
	// [1 2] [2 0]
	// out variant 1 native 0 fallback 0
}

// A Pool lends runtimes to many goroutines.
func ExamplePool() {
	g, err := graph.Parse(`graph(%x : Tensor):
  %y : Tensor = aten::sigmoid(%x)
  return (%y)
`, nil)
	if err != nil {
		panic(err)
	}
	m, err := staticruntime.NewStaticModule(g, nil)
	if err != nil {
		panic(err)
	}
	pool := staticruntime.NewPool(m, 4)
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{0}, 1))
	err = pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
		outs, err := r.Run(x)
		if err != nil {
			return err
		}
		fmt.Println(outs[0].Tensor().F32Contig())
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output: [0.5]
}
