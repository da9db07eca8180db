package hostile

import (
	"fmt"
	"github.com/gosr/gosr/internal/hostile/gen"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// Cases are the campaign's hostile inputs, by class. Sizes are the
// campaign's where the class needs them (a 2M-term sum is what must not
// crash); generators make each input in the child, so nothing big is kept
// in the repository.
func Cases() []Case {
	var cs []Case
	for _, group := range [][]Case{
		deepPickleCases(),
		longCodeCases(),
		hugeSizeCases(),
		zipBombCases(),
		badArchiveCases(),
		runInputCases(),
		bigGraphCases(),
		misuseCases(),
	} {
		cs = append(cs, group...)
	}
	return cs
}

// Depths and lengths of the campaign's inputs.
const (
	// campaignDeep is the campaign's tuple: 3 MB of pickle, a 29 KB file.
	// Other cases nest deep levels: with the child's 256 MB stack, enough
	// to overflow any recursion of more than 256 bytes a level.
	campaignDeep = 3_000_000
	deep         = 1_000_000
	terms        = 2_000_000 // x + x + ... in one expression
	chainLen     = 600_000   // x.relu().relu()...
	nesting      = 1_000_000 // ((((x)))), -(-(-x)), ...
	gib          = 1 << 30
)

// rejected is err when gosr rejected the input, and a wrong outcome when
// it accepted what it must not.
func rejected(err error, what string, args ...any) error {
	if err == nil {
		return Wrongf("accepted "+what, args...)
	}
	return err
}

// moduleHead starts code/__torch__.py of the frozen module __torch__.M that
// the generated archives hold; a body of forward follows.
const moduleHead = "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n"

// scriptArchive is a TorchScript archive of module M whose forward is
// body, with data.pkl, the code (deflated, as torch.jit.save writes code)
// and any extra entries (constants.pkl and its storages).
func scriptArchive(body string, extra ...gen.Entry) []byte {
	es := []gen.Entry{
		{Name: "data.pkl", Data: moduleData()},
		{Name: "code/__torch__.py", Data: []byte(moduleHead + body), Deflate: true},
		{Name: "version", Data: []byte("3\n")},
	}
	return gen.BuildArchive("m", append(es, extra...)...)
}

// loadAndRun loads an archive from memory, prepares it and runs it on
// inputs: the path a server takes with a file it was sent. It returns the
// outputs (cloned) or the first error.
func loadAndRun(archive []byte, inputs ...ivalue.IValue) ([]ivalue.IValue, error) {
	m, err := loaders.LoadBytes("hostile.pt", archive)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return prepareAndRun(m, inputs...)
}

func prepareAndRun(m *loaders.Model, inputs ...ivalue.IValue) ([]ivalue.IValue, error) {
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	if err != nil {
		return nil, err
	}
	outs, err := sm.NewRuntime().Run(inputs...)
	if err != nil {
		return nil, err
	}
	for i := range outs {
		outs[i] = outs[i].Clone()
	}
	return outs, nil
}

// x4 is the usual small input: [[1, -2, 3, -4]].
func x4() *ivalue.Tensor { return ivalue.F32Tensor([]float32{1, -2, 3, -4}, 1, 4) }

// expectTensor checks that outs is one tensor equal to want.
func expectTensor(outs []ivalue.IValue, want *ivalue.Tensor) error {
	if len(outs) != 1 || !outs[0].IsTensor() {
		return Wrongf("got %d outputs (%v), want one tensor", len(outs), kinds(outs))
	}
	if err := fixture.Compare(outs[0].Tensor(), want, 1e-5, 1e-6); err != nil {
		return Wrongf("output differs from the reference: %v", err)
	}
	return nil
}

func kinds(vs []ivalue.IValue) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Kind().String()
	}
	return out
}

// catchPanic runs f and returns a panic it raised as an error: for the
// few calls whose documented way to refuse is a panic (a tensor read as
// another dtype, a constructor given impossible sizes).
func catchPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}
