package loaders_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/graph/passes"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/loaders/tscode"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// The packages are made by scripts/make_package_testdata.py.
var packageDir = filepath.Join("testdata", "package")

func readPackageFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(packageDir, name))
	require.NoError(t, err)
	return b
}

func pythonCallNodes(g *graph.Graph) []*graph.Node {
	var out []*graph.Node
	g.Walk(func(n *graph.Node) {
		if n.Kind == loaders.PythonCallOp {
			out = append(out, n)
		}
	})
	return out
}

func types(vs []*graph.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Type.String()
	}
	return out
}

// TestPackageMLPMatchesPyTorch: ScriptModules pickled into a torch.package
// (one scripted, one frozen, sharing the package's code folder) run in gosr
// as PyTorch ran them.
func TestPackageMLPMatchesPyTorch(t *testing.T) {
	in, err := loaders.ReadTorchSave(filepath.Join(packageDir, "mlp.inputs.pt"))
	require.NoError(t, err)
	want, err := loaders.ReadTorchSave(filepath.Join(packageDir, "mlp.expected.pt"))
	require.NoError(t, err)
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "mlp.pt"))
	require.NoError(t, err)
	defer p.Close()
	for _, c := range []struct {
		resource string
		frozen   bool
	}{
		{"model.pkl", false},
		{"frozen.pkl", true},
	} {
		t.Run(c.resource, func(t *testing.T) {
			m, err := p.LoadScript("model", c.resource)
			require.NoError(t, err)
			defer m.Close()
			assert.Equal(t, c.frozen, m.Frozen)
			assert.Equal(t, []string{"x"}, m.InputNames)
			assert.Equal(t, "6", m.Version)
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			require.NoError(t, err)
			r := sm.NewRuntime()
			for run := 0; run < 2; run++ {
				out, err := r.Run(in.List().Items...)
				require.NoError(t, err, sm.Graph().String())
				got := fixture.Flatten(out)
				exp := fixture.Flatten([]ivalue.IValue{want})
				require.Len(t, got, len(exp))
				for i := range got {
					assert.NoError(t, fixture.Compare(got[i], exp[i], 1e-5, 1e-6), "output %d, run %d", i, run)
				}
			}
		})
	}
}

// TestPackageModelOutlivesPackage: a model keeps the mapping its tensor
// constants view after the package is closed.
func TestPackageModelOutlivesPackage(t *testing.T) {
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "mlp.pt"))
	require.NoError(t, err)
	m, err := p.LoadScript("model", "frozen.pkl")
	require.NoError(t, err)
	require.NoError(t, p.Close())
	in, err := loaders.ReadTorchSave(filepath.Join(packageDir, "mlp.inputs.pt"))
	require.NoError(t, err)
	sm, err := staticruntime.NewStaticModule(m.Graph, nil)
	require.NoError(t, err)
	_, err = sm.NewRuntime().Run(in.List().Items...)
	require.NoError(t, err)
	require.NoError(t, m.Close())
}

func TestPackageContents(t *testing.T) {
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "fallback.pt"))
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, "fallback.pt", p.Name())
	assert.True(t, p.Archive().Mapped())
	assert.Equal(t, []string{"textpkg", "textpkg.tok"}, p.Modules())
	assert.Equal(t, []string{"numpy", "torch.jit._script"}, p.ExternModules())
	assert.Regexp(t, `^3\.\d+\.\d+$`, p.PythonVersion())
	assert.Contains(t, p.Records(), "model/model.pkl")
	assert.True(t, p.Has(loaders.FallbackManifest))

	for _, c := range []struct {
		module, path string
		isPackage    bool
		contains     string
	}{
		{"textpkg", "textpkg/__init__.py", true, ""},
		{"textpkg.tok", "textpkg/tok.py", false, "def tokenize(text):"},
	} {
		src, path, isPkg, err := p.ModuleSource(c.module)
		require.NoError(t, err, c.module)
		assert.Equal(t, c.path, path, c.module)
		assert.Equal(t, c.isPackage, isPkg, c.module)
		assert.Contains(t, string(src), c.contains, c.module)
	}
	_, _, _, err = p.ModuleSource("textpkg.nope")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "fallback.pt")

	// Stored records are views of the mapping, not copies.
	r1, err := p.Record("textpkg/tok.py")
	require.NoError(t, err)
	r2, err := p.Record("textpkg/tok.py")
	require.NoError(t, err)
	assert.Same(t, &r1[0], &r2[0])

	ops, err := p.Fallbacks()
	require.NoError(t, err)
	require.Len(t, ops, 2)
	fns := map[string]string{}
	for _, op := range ops {
		assert.Equal(t, loaders.PythonCallOp, op.Name)
		assert.True(t, strings.HasPrefix(op.Schema, op.Name+"."+op.Overload+"("), op.Schema)
		require.Len(t, op.Functions, 1)
		fns[op.Functions[0]] = op.Schema[strings.IndexByte(op.Schema, '('):]
	}
	assert.Equal(t, map[string]string{
		"textpkg.tok:tokenize": "(str fn, str text) -> (Tensor, Tensor)",
		"textpkg.tok:top_mask": "(str fn, Tensor x, int k) -> Tensor",
	}, fns)

	q, err := loaders.OpenPackage(filepath.Join(packageDir, "mlp.pt"))
	require.NoError(t, err)
	defer q.Close()
	ops, err = q.Fallbacks()
	assert.NoError(t, err)
	assert.Empty(t, ops, "no manifest, no fallback ops")
}

// TestPackageImplicitPackage: a folder of sources without __init__.py is
// an (empty) package, as torch.package imports it.
func TestPackageImplicitPackage(t *testing.T) {
	data := rezip(t, readPackageFile(t, "fallback.pt"), func(rec string, b []byte) []byte {
		if rec == "textpkg/__init__.py" {
			return nil
		}
		return b
	})
	p, err := loaders.ParsePackage("implicit.pt", data)
	require.NoError(t, err)
	assert.Equal(t, []string{"textpkg.tok"}, p.Modules())
	src, path, isPkg, err := p.ModuleSource("textpkg")
	require.NoError(t, err)
	assert.Empty(t, src)
	assert.Equal(t, "textpkg/", path)
	assert.True(t, isPkg)
}

// TestPackageFallbackGraph: calls of packaged Python functions compile to
// gosr::python_call nodes typed by the manifest's schemas, and the passes
// and alias analysis keep them and treat them conservatively.
func TestPackageFallbackGraph(t *testing.T) {
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "fallback.pt"))
	require.NoError(t, err)
	defer p.Close()
	m, err := p.LoadScript("model", "model.pkl")
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, []string{"text", "x"}, m.InputNames)
	assert.Equal(t, "__torch__.TextModel", m.Class)

	check := func(g *graph.Graph) []*graph.Node {
		calls := pythonCallNodes(g)
		require.Len(t, calls, 2, g.String())
		for i, c := range []struct {
			fn       string
			ins, out []string
		}{
			{"textpkg.tok:tokenize", []string{"str", "str"}, []string{"Tensor", "Tensor"}},
			{"textpkg.tok:top_mask", []string{"str", "Tensor", "int"}, []string{"Tensor"}},
		} {
			n := calls[i]
			fn, ok := graph.ConstantValue(n.Inputs[0])
			require.True(t, ok, "the function name is a constant")
			assert.Equal(t, c.fn, fn.Str())
			assert.Equal(t, c.ins, types(n.Inputs), c.fn)
			assert.Equal(t, c.out, types(n.Outputs), c.fn)
		}
		return calls
	}
	calls := check(m.Graph)
	// The text goes straight from the graph input to the call.
	assert.Same(t, m.Graph.Inputs()[0], calls[0].Inputs[1])
	// top_mask's k is a constant the compiler did not fold into anything.
	k, ok := graph.ConstantValue(calls[1].Inputs[2])
	require.True(t, ok)
	assert.Equal(t, int64(2), k.Int())

	// The op is unknown to the alias analysis: its outputs may alias
	// anything external, so the memory planner leaves them alone.
	db := alias.Analyze(m.Graph)
	for _, n := range calls {
		for _, o := range n.Outputs {
			assert.True(t, db.MayAliasGraphInput(o), "output %s of %s", o, n.Kind)
		}
	}
	// The pass pipeline keeps both calls (unknown ops have side effects and
	// are never folded, even with gosr's kernels to fold with) and leaves a
	// valid graph.
	g := m.Graph
	registered := ops.Registered()
	require.NoError(t, passes.Run(g, &passes.Context{
		EnableOutVariant: true, Verify: true,
		Eval:         ops.EvalNode,
		HasOp:        func(kind string) bool { return slices.Contains(registered, kind) },
		FunctionalOf: ops.FunctionalOf,
	}))
	check(g)
}

// TestPackageCustomOpNamespace: a custom op of any namespace, registered
// with tscode.RegisterSchemas, compiles from ops.NS.NAME(...) and is not
// evaluated at compile time even on constant inputs.
func TestPackageCustomOpNamespace(t *testing.T) {
	require.NoError(t, tscode.RegisterSchemas(
		"gosrtest::twice(Tensor x) -> Tensor",
		"gosrtest::answer(int a) -> int",
	))
	data := rezip(t, readPackageFile(t, "mlp.pt"), replaceIn(".data/ts_code/code/__torch__.py",
		"return _0", "return ops.gosrtest.twice(torch.mul(_0, ops.gosrtest.answer(3)))"))
	p, err := loaders.ParsePackage("mlp.pt", data)
	require.NoError(t, err)
	m, err := p.LoadScript("model", "model.pkl")
	require.NoError(t, err)
	kinds := map[string]int{}
	m.Graph.Walk(func(n *graph.Node) { kinds[n.Kind]++ })
	assert.Equal(t, 1, kinds["gosrtest::twice"], m.Graph.String())
	assert.Equal(t, 1, kinds["gosrtest::answer"], "not folded: "+m.Graph.String())
}

func TestRegisterSchemas(t *testing.T) {
	const s1 = "gosrtest::reg.a(str fn, Tensor x) -> Tensor"
	require.NoError(t, tscode.RegisterSchemas(s1))
	for _, c := range []struct {
		name  string
		lines []string
		err   []string // "" : no error
	}{
		{"identical again", []string{s1, "  " + s1}, nil},
		{"same schema spaced differently", []string{"gosrtest::reg.a(str fn,Tensor x)->Tensor"}, nil},
		{"new overload", []string{"gosrtest::reg.b(str fn, int x) -> int"}, nil},
		{"different schema, same overload", []string{"gosrtest::reg.a(str fn, Tensor x) -> (Tensor, Tensor)"},
			[]string{"gosrtest::reg.a", "already registered", "(str fn, Tensor x) -> Tensor"}},
		{"conflict inside one call", []string{"gosrtest::reg.c(int x) -> int", "gosrtest::reg.c(float x) -> int"},
			[]string{"gosrtest::reg.c", "also given"}},
		{"bad schema", []string{"gosrtest::reg.d(str fn"}, []string{"gosrtest::reg.d(str fn"}},
		{"no namespace", []string{"reg(int x) -> int"}, []string{"no namespace"}},
		{"aten conflict", []string{"aten::relu(Tensor self) -> int"}, []string{"aten::relu", "already registered"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := tscode.RegisterSchemas(c.lines...)
			if c.err == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range c.err {
				assert.ErrorContains(t, err, s)
			}
		})
	}
	// A failed call adds nothing: reg.c's first line is not registered.
	assert.NoError(t, tscode.RegisterSchemas("gosrtest::reg.c(bool x) -> int"))
}

// TestPackageBadInput: each broken package is an error naming the file
// and what is wrong; nothing panics.
func TestPackageBadInput(t *testing.T) {
	mlp := readPackageFile(t, "mlp.pt")
	fallback := readPackageFile(t, "fallback.pt")
	manifest := func(text string) func(string, []byte) []byte {
		return func(rec string, b []byte) []byte {
			if rec == loaders.FallbackManifest {
				return []byte(text)
			}
			return b
		}
	}
	drop := func(entry string) func(string, []byte) []byte {
		return func(rec string, b []byte) []byte {
			if rec == entry {
				return nil
			}
			return b
		}
	}
	// A byte of model/model.pkl flipped in place: only the CRC tells.
	corrupt := bytes.Clone(mlp)
	zr, err := zip.NewReader(bytes.NewReader(mlp), int64(len(mlp)))
	require.NoError(t, err)
	for _, f := range zr.File {
		if f.Name == "mlp/model/model.pkl" {
			off, err := f.DataOffset()
			require.NoError(t, err)
			corrupt[off+10] ^= 0x20
		}
	}
	jitArchive, err := os.ReadFile(filepath.Join(ptfixture.Committed(), "mlp.scripted.pt"))
	require.NoError(t, err)

	for _, c := range []struct {
		name     string
		data     []byte
		resource string // "pkg/resource.pkl"
		err      []string
	}{
		{"truncated", mlp[:len(mlp)/2], "", []string{"bad.pt", "zip"}},
		{"empty", nil, "", []string{"bad.pt"}},
		{"torch.jit.save archive", jitArchive, "", []string{"bad.pt", "torch.jit.save", "loaders.Load"}},
		{"corrupt pickle", corrupt, "model/model.pkl", []string{"bad.pt", "model/model.pkl", "CRC"}},
		{"no such resource", mlp, "model/nope.pkl", []string{"bad.pt", "model/nope.pkl"}},
		{"dict of a tensor", mlp, "data/weights.pkl", []string{"bad.pt", "data/weights.pkl", "holds a dict, not a ScriptModule"}},
		{"dict holding a ScriptModule", mlp, "data/both.pkl", []string{"bad.pt", "data/both.pkl", "holds a dict", "a ScriptModule is inside it"}},
		{"TorchScript pickle missing", rezip(t, mlp, drop(".data/ts_code/0/data.pkl")), "model/model.pkl",
			[]string{"bad.pt", "model/model.pkl", ".data/ts_code/0/data.pkl"}},
		{"storage missing", rezip(t, mlp, drop(".data/0.storage")), "model/model.pkl", []string{"bad.pt", ".data/0.storage"}},
		{"code missing", rezip(t, mlp, drop(".data/ts_code/code/__torch__.py")), "model/model.pkl", []string{"bad.pt", "code/__torch__.py"}},
		{"unregistered gosr op", rezip(t, mlp, replaceIn(".data/ts_code/code/__torch__.py", "return _0", "return ops.gosr.no_such_op(_0)")),
			"model/model.pkl", []string{"bad.pt", "__torch__.py", "gosr::no_such_op", "no registered schema", "__gosr__/fallbacks.json", "missing"}},
		{"unregistered custom op", rezip(t, mlp, replaceIn(".data/ts_code/code/__torch__.py", "return _0", "return ops.myns.nope(_0)")),
			"model/model.pkl", []string{"bad.pt", "myns::nope", "no registered schema", "RegisterSchemas"}},
		{"manifest missing", readPackageFile(t, "fallback_nomanifest.pt"), "model/model.pkl",
			[]string{"bad.pt", "gosr::python_call", "__gosr__/fallbacks.json", "manifest"}},
		{"manifest not JSON", rezip(t, fallback, manifest("{")), "model/model.pkl", []string{"bad.pt", "__gosr__/fallbacks.json", "JSON"}},
		{"manifest version", rezip(t, fallback, manifest(`{"version": 2, "ops": []}`)), "model/model.pkl", []string{"bad.pt", "version is 2, expected 1"}},
		{"manifest bad schema", rezip(t, fallback, manifest(`{"version": 1, "ops": [{"name": "gosr::python_call", "overload": "x", "schema": "gosr::python_call.x(str fn"}]}`)),
			"model/model.pkl", []string{"bad.pt", "ops[0]", "gosr::python_call.x(str fn"}},
		{"manifest name mismatch", rezip(t, fallback, manifest(`{"version": 1, "ops": [{"name": "gosr::python_call", "overload": "y", "schema": "gosr::python_call.x(str fn) -> int"}]}`)),
			"model/model.pkl", []string{"bad.pt", "ops[0]", `overload "y"`}},
		{"manifest fn not a str", rezip(t, fallback, manifest(`{"version": 1, "ops": [{"name": "gosr::python_call", "overload": "t1", "schema": "gosr::python_call.t1(int fn) -> int"}]}`)),
			"model/model.pkl", []string{"bad.pt", "first argument", "str"}},
		{"manifest bad function", rezip(t, fallback, manifest(`{"version": 1, "ops": [{"name": "gosr::python_call", "overload": "t2", "schema": "gosr::python_call.t2(str fn) -> int", "functions": ["nocolon"]}]}`)),
			"model/model.pkl", []string{"bad.pt", `"nocolon"`, "pkg.mod:qualname"}},
		{"manifest conflicts with a registered schema", rezip(t, fallback, manifest(`{"version": 1, "ops": [{"name": "gosr::python_call", "overload": "s20038910", "schema": "gosr::python_call.s20038910(str fn, str text) -> Tensor"}]}`)),
			"model/model.pkl", []string{"bad.pt", "gosr::python_call.s20038910", "already registered"}},
		{"function not declared", rezip(t, fallback, replaceIn(loaders.FallbackManifest, `"textpkg.tok:tokenize"`, `"textpkg.tok:other"`)),
			"model/model.pkl", []string{"bad.pt", "textpkg.tok:tokenize", "no op of __gosr__/fallbacks.json declares"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "manifest conflicts with a registered schema" {
				loadFallbackOnce(t) // registers the real s20038910
			}
			p, err := loaders.ParsePackage("bad.pt", c.data)
			if err == nil {
				require.NotEmpty(t, c.resource, "the package opened")
				pkg, res, _ := strings.Cut(c.resource, "/")
				_, err = p.LoadScript(pkg, res)
			}
			require.Error(t, err)
			t.Log(err)
			for _, s := range c.err {
				assert.ErrorContains(t, err, s)
			}
		})
	}
}

func loadFallbackOnce(t *testing.T) {
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "fallback.pt"))
	require.NoError(t, err)
	defer p.Close()
	m, err := p.LoadScript("model", "model.pkl")
	require.NoError(t, err)
	m.Close()
}

// TestPackageMissingManifestAfterRegistration: schemas are registered
// process-wide, yet a package without a manifest is refused even after
// another package registered the same signatures.
func TestPackageMissingManifestAfterRegistration(t *testing.T) {
	loadFallbackOnce(t)
	p, err := loaders.OpenPackage(filepath.Join(packageDir, "fallback_nomanifest.pt"))
	require.NoError(t, err)
	defer p.Close()
	_, err = p.LoadScript("model", "model.pkl")
	require.Error(t, err)
	assert.ErrorContains(t, err, "calls textpkg.tok:tokenize, but the package has no fallback manifest __gosr__/fallbacks.json")
	assert.False(t, errors.Is(err, fs.ErrNotExist))
}
