package loaders

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/pickle"
	"github.com/gosr/gosr/loaders/tscode"
)

// Records of a torch.package archive (relative to its top-level folder).
const (
	pkgDataDir      = ".data/"
	pkgTSCodeDir    = ".data/ts_code/"
	pkgExternRec    = ".data/extern_modules"
	pkgPyVersionRec = ".data/python_version"
	pkgVersionRec   = ".data/version"
	// FallbackManifest is the resource listing a package's gosr fallback
	// ops (written by scripts/gosr_fallback.py).
	FallbackManifest = "__gosr__/fallbacks.json"
	// PythonCallOp is the op scripted code calls a packaged Python
	// function through; its first argument is the constant "pkg.mod:qualname".
	PythonCallOp = "gosr::python_call"
)

// Package is a torch.package archive (torch.package.PackageExporter):
// Python sources of the packaged modules, pickled resources, and the
// ScriptModules pickled among them (their TorchScript code and tensor
// storages under .data/). Like an Archive it maps the file; records and
// tensors from it view that mapping (see Archive for how long that lasts:
// a Model from LoadScript holds its own reference).
type Package struct {
	a       *Archive
	path    string
	modules map[string]pkgModule // dotted name -> source
	names   []string             // modules with a source, sorted
	dirs    map[string]bool      // folders holding sources: implicit packages
	// closed: the package's own reference is given back; what others
	// hold (models) may keep the mapping, but the package reads no more.
	closed atomic.Bool
}

type pkgModule struct {
	path      string // record: "textpkg/tok.py", "textpkg/__init__.py"
	isPackage bool
}

// FallbackOp is one op of a package's fallback manifest
// (__gosr__/fallbacks.json): the schema of a gosr::python_call overload
// and the packaged functions ("pkg.mod:qualname") called through it.
type FallbackOp struct {
	Name      string   `json:"name"`     // "gosr::python_call"
	Overload  string   `json:"overload"` // "s1234abcd"
	Schema    string   `json:"schema"`   // "gosr::python_call.s1234abcd(str fn, str text) -> (Tensor, Tensor)"
	Functions []string `json:"functions"`
}

type fallbackManifest struct {
	Version *int         `json:"version"`
	Ops     []FallbackOp `json:"ops"`
}

// OpenPackage maps a torch.package archive and indexes its modules. The
// default Options bound what reading it may cost.
func OpenPackage(path string) (*Package, error) { return OpenPackageOptions(path, nil) }

// OpenPackageOptions is OpenPackage with limits (nil: the defaults), which
// apply to everything read from the package.
func OpenPackageOptions(path string, o *Options) (*Package, error) {
	a, err := OpenArchiveOptions(path, o)
	if err != nil {
		return nil, err
	}
	p, err := newPackage(a)
	if err != nil {
		a.Close()
		return nil, err
	}
	p.path = path
	return p, nil
}

// ParsePackage is OpenPackage for an archive already in memory (records
// and tensors view data).
func ParsePackage(name string, data []byte) (*Package, error) {
	return ParsePackageOptions(name, data, nil)
}

// ParsePackageOptions is ParsePackage with limits (nil: the defaults).
func ParsePackageOptions(name string, data []byte, o *Options) (*Package, error) {
	a, err := ParseArchiveOptions(name, data, o)
	if err != nil {
		return nil, err
	}
	p, err := newPackage(a)
	if err != nil {
		return nil, err
	}
	p.path = name
	return p, nil
}

func newPackage(a *Archive) (*Package, error) {
	if !a.Has(pkgVersionRec) && !a.Has(pkgExternRec) {
		switch {
		case a.Has("data.pkl") && hasCode(a):
			return nil, fmt.Errorf("package %s: a TorchScript archive written by torch.jit.save, not a torch.package (read it with loaders.Load)", a.Name())
		case a.Has("data.pkl"):
			return nil, fmt.Errorf("package %s: a torch.save file, not a torch.package (read it with loaders.ReadTorchSave)", a.Name())
		}
		return nil, fmt.Errorf("package %s: no %s or %s record: not a torch.package archive", a.Name(), pkgVersionRec, pkgExternRec)
	}
	p := &Package{a: a, modules: map[string]pkgModule{}, dirs: map[string]bool{}}
	for _, rec := range a.Records() {
		if strings.HasPrefix(rec, pkgDataDir) || !strings.HasSuffix(rec, ".py") {
			continue
		}
		parts := strings.Split(strings.TrimSuffix(rec, ".py"), "/")
		isPkg := parts[len(parts)-1] == "__init__"
		if isPkg {
			parts = parts[:len(parts)-1]
		}
		if len(parts) == 0 || containsEmpty(parts) {
			continue // "__init__.py" at the top, "a//b.py": no module name
		}
		name := strings.Join(parts, ".")
		if old, dup := p.modules[name]; dup {
			return nil, fmt.Errorf("package %s: module %s has two sources, %s and %s", a.Name(), name, old.path, rec)
		}
		p.modules[name] = pkgModule{path: rec, isPackage: isPkg}
		for i := 1; i < len(parts); i++ {
			p.dirs[strings.Join(parts[:i], ".")] = true
		}
	}
	for name, m := range p.modules {
		// PackageImporter refuses the same ("inconsistent module structure").
		if !m.isPackage && p.dirs[name] {
			return nil, fmt.Errorf("package %s: module %s (%s) is not a package, but the archive holds submodules of it", a.Name(), name, m.path)
		}
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	return p, nil
}

func containsEmpty(parts []string) bool {
	for _, s := range parts {
		if s == "" {
			return true
		}
	}
	return false
}

// Name is the archive's file name, used in errors.
func (p *Package) Name() string { return p.a.Name() }

// Archive is the underlying zip archive.
func (p *Package) Archive() *Archive { return p.a }

// Records lists the records, relative to the top-level folder, sorted.
func (p *Package) Records() []string { return p.a.Records() }

// Has reports whether the record exists.
func (p *Package) Has(name string) bool { return p.a.Has(name) }

// Record returns a record's bytes: a view of the archive's memory for a
// stored record (torch.package stores all but TorchScript code), valid
// until the last Close.
func (p *Package) Record(name string) ([]byte, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	return p.a.Record(name)
}

// Close releases the package's reference to the mapping; models loaded
// from it keep theirs until they are closed. Closing twice releases it
// once: the second must not take a model's reference.
func (p *Package) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	return p.a.Close()
}

func (p *Package) checkOpen() error {
	if p.closed.Load() {
		return fmt.Errorf("package %s: the package is closed", p.a.Name())
	}
	return nil
}

// Modules lists the dotted names of the modules whose Python source the
// package holds ("textpkg" for textpkg/__init__.py, "textpkg.tok"),
// sorted. Folders holding sources but no __init__.py are implicit packages
// (see ModuleSource) and are not listed.
func (p *Package) Modules() []string { return append([]string(nil), p.names...) }

// ModuleSource returns the source of a packaged module, its record path
// and whether it is a package (an __init__.py). For an implicit package (a
// folder of sources without __init__.py, importable in torch.package as an
// empty package) src is empty, path is the folder ("a/b/") and isPackage
// is true. An unknown module is an error wrapping fs.ErrNotExist.
func (p *Package) ModuleSource(name string) (src []byte, path string, isPackage bool, err error) {
	m, ok := p.modules[name]
	if !ok {
		if p.dirs[name] {
			return nil, strings.ReplaceAll(name, ".", "/") + "/", true, nil
		}
		return nil, "", false, fmt.Errorf("package %s: no module %s: %w", p.a.Name(), name, fs.ErrNotExist)
	}
	b, err := p.checkedRecord(m.path)
	if err != nil {
		return nil, "", false, err
	}
	return b, m.path, m.isPackage, nil
}

// ExternModules lists the modules the package takes from the system
// (.data/extern_modules), in the archive's order.
func (p *Package) ExternModules() []string {
	b, err := p.checkedRecord(pkgExternRec)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// PythonVersion is the Python version the package was made with
// (.data/python_version), "" if it is not recorded.
func (p *Package) PythonVersion() string {
	b, err := p.checkedRecord(pkgPyVersionRec)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// checkedRecord is Record with the CRC-32 checked, for the small records
// read as text or pickles (storages are not checked, as in Load).
func (p *Package) checkedRecord(rec string) ([]byte, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	b, err := p.a.Record(rec)
	if err != nil {
		return nil, err
	}
	if f := p.a.files[rec]; f.Method == zip.Store && crc32.ChecksumIEEE(b) != f.CRC32 {
		return nil, fmt.Errorf("package %s: entry %q: CRC-32 mismatch (corrupt data)", p.a.Name(), rec)
	}
	return b, nil
}

// Fallbacks reads the package's fallback manifest (FallbackManifest); a
// package without one has no fallback ops (nil, nil). Every schema must
// parse and agree with its op's name and overload; gosr::python_call's
// first argument must be the function name (a str), and functions are
// "pkg.mod:qualname".
func (p *Package) Fallbacks() ([]FallbackOp, error) {
	if !p.a.Has(FallbackManifest) {
		return nil, nil
	}
	b, err := p.checkedRecord(FallbackManifest)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("package %s: %s: %s", p.a.Name(), FallbackManifest, fmt.Sprintf(format, args...))
	}
	var m fallbackManifest
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return nil, fail("not valid JSON: %v", err)
	}
	if m.Version == nil || *m.Version != 1 {
		v := "missing"
		if m.Version != nil {
			v = fmt.Sprint(*m.Version)
		}
		return nil, fail("version is %s, expected 1", v)
	}
	for i, op := range m.Ops {
		s, err := graph.ParseSchema(op.Schema)
		if err != nil {
			return nil, fail("ops[%d]: schema %q: %v", i, op.Schema, err)
		}
		if s.Name != op.Name || s.Overload != op.Overload {
			return nil, fail("ops[%d]: schema %q is not op %s overload %q", i, op.Schema, op.Name, op.Overload)
		}
		if op.Name == PythonCallOp && (len(s.Arguments) == 0 || s.Arguments[0].Type.Kind != graph.StringType) {
			return nil, fail("ops[%d]: schema %q: the first argument of %s must be the function name, a str", i, op.Schema, PythonCallOp)
		}
		for _, fn := range op.Functions {
			if mod, qual, ok := strings.Cut(fn, ":"); !ok || mod == "" || qual == "" {
				return nil, fail("ops[%d]: function %q is not pkg.mod:qualname", i, fn)
			}
		}
	}
	return m.Ops, nil
}

// resourcePath is where torch.package keeps resource of package pkg
// ("model", "model.pkl" -> "model/model.pkl").
func resourcePath(pkg, resource string) string {
	dir := strings.ReplaceAll(pkg, ".", "/")
	if dir == "" {
		return resource
	}
	return dir + "/" + resource
}

// LoadScript reads the ScriptModule pickled as resource of pkg
// (PackageExporter.save_pickle(pkg, resource, scripted)) and compiles its
// forward method to a frozen graph, as Load does for a torch.jit.save
// archive. The manifest's fallback schemas are registered first (see
// tscode.RegisterSchemas), so calls of gosr::python_call compile to nodes
// of that kind, whose first input is the constant function name; every
// such node must match an op of this package's manifest. Tensor constants
// view the package's mapping: the Model holds a reference to it until
// Model.Close, and the graph's Backing is the mapping (see Model.Close).
func (p *Package) LoadScript(pkg, resource string) (m *Model, err error) {
	if resource == "" {
		return nil, fmt.Errorf("package %s: LoadScript(%q, %q): the resource name is empty", p.a.Name(), pkg, resource)
	}
	rec := resourcePath(pkg, resource)
	if !p.a.Has(rec) {
		return nil, fmt.Errorf("package %s: no resource %s (%s): %w", p.a.Name(), resource, rec, fs.ErrNotExist)
	}
	// The model's reference, taken before reading so that a Close on
	// another goroutine cannot unmap the records under the compiler.
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if _, err := p.a.hold(); err != nil {
		return nil, fmt.Errorf("package %s: %w", p.a.Name(), err)
	}
	defer func() {
		if err != nil {
			p.a.Close()
		}
	}()
	fallbacks, err := p.Fallbacks()
	if err != nil {
		return nil, err
	}
	schemas := make([]string, len(fallbacks))
	for i, op := range fallbacks {
		schemas[i] = op.Schema
	}
	if err := tscode.RegisterSchemas(schemas...); err != nil {
		return nil, fmt.Errorf("package %s: %s: %w", p.a.Name(), FallbackManifest, err)
	}
	id, err := p.scriptModuleID(rec)
	if err != nil {
		return nil, err
	}
	m, err = p.compileScript(rec, id)
	if err != nil {
		return nil, err
	}
	if err := checkFallbackNodes(m.Graph, fallbacks); err != nil {
		return nil, fmt.Errorf("package %s: %s: %w", p.a.Name(), rec, err)
	}
	m.own(p.a)
	return m, nil
}

func (p *Package) compileScript(rec, id string) (*Model, error) {
	dir := pkgTSCodeDir + id + "/"
	if !p.a.Has(dir + "data.pkl") {
		return nil, fmt.Errorf("package %s: %s: ScriptModule %q has no %sdata.pkl record", p.a.Name(), rec, id, dir)
	}
	if _, err := p.checkedRecord(dir + "data.pkl"); err != nil {
		return nil, err
	}
	// TorchScript's pickles name their storages "<key>.storage", under
	// .data/ with those of the package's Python pickles (shared with them).
	root, err := UnpickleTorch(p.a, dir+"data.pkl", pkgDataDir)
	if err != nil {
		return nil, err
	}
	obj, ok := root.Ref().(*ScriptObject)
	if root.Kind() != ivalue.KindObject || !ok {
		return nil, fmt.Errorf("package %s: %sdata.pkl holds a %s, not a module object", p.a.Name(), dir, root.Kind())
	}
	var consts []ivalue.IValue
	if p.a.Has(dir + "constants.pkl") {
		if _, err := p.checkedRecord(dir + "constants.pkl"); err != nil {
			return nil, err
		}
		cv, err := UnpickleTorch(p.a, dir+"constants.pkl", pkgDataDir)
		if err != nil {
			return nil, err
		}
		if cv.Kind() != ivalue.KindTuple && cv.Kind() != ivalue.KindList {
			return nil, fmt.Errorf("package %s: %sconstants.pkl holds a %s, expected a tuple", p.a.Name(), dir, cv.Kind())
		}
		consts = cv.List().Items
	}
	// Code of every ScriptModule in the package lies in one folder.
	code := newCodeBudget(p.a)
	src := func(entry string) ([]byte, error) {
		full := pkgTSCodeDir + entry
		if !p.a.Has(full) {
			return nil, fmt.Errorf("package %s: entry %q: %w", p.a.Name(), full, fs.ErrNotExist)
		}
		return code.read(full, p.checkedRecord)
	}
	res, err := tscode.Compile(obj, consts, src, "forward")
	if err != nil {
		return nil, fmt.Errorf("package %s: %s (code under %s): %w", p.a.Name(), rec, pkgTSCodeDir, err)
	}
	if err := checkGraphSize(res.Graph, p.a.lim.MaxGraphNodes); err != nil {
		return nil, fmt.Errorf("package %s: %s: %w", p.a.Name(), rec, err)
	}
	version := ""
	if p.a.Has(pkgVersionRec) {
		b, err := p.checkedRecord(pkgVersionRec)
		if err != nil {
			return nil, err
		}
		version = strings.TrimSpace(string(b))
	}
	return &Model{
		Path:       p.path,
		Class:      obj.Class,
		Graph:      res.Graph,
		InputNames: res.InputNames,
		Frozen:     isFrozen(obj),
		Version:    version,
	}, nil
}

// checkFallbackNodes checks every gosr::python_call node (forked
// subgraphs included) against the package's manifest: the schemas are
// registered process-wide, so without this a package missing its manifest
// would compile whenever another package had registered the same
// signature, and run functions nobody declared.
func checkFallbackNodes(g *graph.Graph, ops []FallbackOp) error {
	var err error
	visit := func(n *graph.Node) {
		if err != nil || n.Kind != PythonCallOp {
			return
		}
		fn := ""
		if len(n.Inputs) > 0 {
			if c, ok := graph.ConstantValue(n.Inputs[0]); ok && c.Kind() == ivalue.KindString {
				fn = c.Str()
			}
		}
		if fn == "" {
			err = fmt.Errorf("node %s: the first input must be the constant function name \"pkg.mod:qualname\"", nodeSig(n))
			return
		}
		if len(ops) == 0 {
			err = fmt.Errorf("node %s calls %s, but the package has no fallback manifest %s (export it with scripts/gosr_fallback.py)", nodeSig(n), fn, FallbackManifest)
			return
		}
		for _, op := range ops {
			if op.Name == n.Kind && schemaFits(op.Schema, n) && (len(op.Functions) == 0 || contains(op.Functions, fn)) {
				return
			}
		}
		err = fmt.Errorf("node %s calls %s, which no op of %s declares with these types", nodeSig(n), fn, FallbackManifest)
	}
	var walk func(g *graph.Graph)
	walk = func(g *graph.Graph) {
		g.Walk(func(n *graph.Node) {
			visit(n)
			if sg := graph.Subgraph(n); sg != nil {
				walk(sg)
			}
		})
	}
	walk(g)
	return err
}

// schemaFits: the node's inputs fit the schema's arguments and its
// outputs have the schema's return types.
func schemaFits(schema string, n *graph.Node) bool {
	s, err := graph.ParseSchema(schema)
	if err != nil || !s.Matches(n) || s.VarRets {
		return false
	}
	for i, r := range s.Returns {
		if r.Type.String() != n.Outputs[i].Type.String() {
			return false
		}
	}
	return true
}

func nodeSig(n *graph.Node) string {
	in := make([]string, len(n.Inputs))
	for i, v := range n.Inputs {
		in[i] = v.Type.String()
	}
	out := make([]string, len(n.Outputs))
	for i, v := range n.Outputs {
		out[i] = v.Type.String()
	}
	return fmt.Sprintf("%s(%s) -> (%s)", n.Kind, strings.Join(in, ", "), strings.Join(out, ", "))
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// scriptModuleID reads the pickle rec and returns the id of the
// ScriptModule it holds (its folder under .data/ts_code/). The pickle is
// only described, never executed: every global becomes an opaque value.
func (p *Package) scriptModuleID(rec string) (string, error) {
	data, err := p.checkedRecord(rec)
	if err != nil {
		return "", err
	}
	d := &pkgDescriber{}
	v, err := pickle.Unpickle(data, &pickle.Options{Name: rec, Global: d.global, PersistentLoad: d.persistentLoad})
	if err != nil {
		return "", fmt.Errorf("package %s: %w", p.a.Name(), err)
	}
	if s, ok := v.(*scriptModuleRef); ok {
		return s.id, nil
	}
	msg := fmt.Sprintf("package %s: %s holds %s, not a ScriptModule", p.a.Name(), rec, describePickled(v))
	if d.scripts > 0 {
		msg += " (a ScriptModule is inside it: pickle the ScriptModule on its own to load it)"
	}
	return "", fmt.Errorf("%s", msg)
}

// pkgDescriber resolves what a package pickle refers to without running
// anything: it finds torch.jit._script.unpackage_script_module(importer,
// id) and describes the rest.
type pkgDescriber struct{ scripts int }

type pyGlobal struct{ name string }

// pyObject is what calling or instantiating a global gave in Python.
type pyObject struct{ maker string }

type scriptModuleRef struct{ id string }

func (g pyGlobal) Call([]any) (any, error)              { return &pyObject{g.name}, nil }
func (g pyGlobal) New([]any, *pickle.Dict) (any, error) { return &pyObject{g.name}, nil }
func (*pyObject) SetState(any) error                    { return nil }
func (*pyObject) SetItem(any, any) error                { return nil }
func (*pyObject) Append(any) error                      { return nil }

const unpackageScriptModule = "torch.jit._script.unpackage_script_module"

func (d *pkgDescriber) global(module, name string) (any, error) {
	return pyGlobal{module + "." + name}, nil
}

// persistentLoad: ("storage", type, key, location, numel) or
// ("reduce_package", [reduce id,] func, args), as PackageImporter reads.
func (d *pkgDescriber) persistentLoad(pid any) (any, error) {
	t, ok := pid.(pickle.Tuple)
	if !ok || len(t) == 0 {
		return nil, fmt.Errorf("persistent id %s: expected a tuple ('storage' or 'reduce_package', ...)", pickle.Describe(pid))
	}
	kind, _ := t[0].(string)
	if b, ok := t[0].([]byte); ok {
		kind = string(b)
	}
	switch kind {
	case "storage":
		return &pyObject{"torch storage"}, nil
	case "reduce_package":
		var fn, args any
		switch len(t) {
		case 3:
			fn, args = t[1], t[2]
		case 4:
			fn, args = t[2], t[3]
		default:
			return nil, fmt.Errorf("persistent id ('reduce_package', ...) has %d items, expected 3 or 4", len(t))
		}
		g, ok := fn.(pyGlobal)
		if !ok {
			return nil, fmt.Errorf("persistent id ('reduce_package', ...): the function is %T, expected a global", fn)
		}
		if g.name != unpackageScriptModule {
			return &pyObject{g.name}, nil
		}
		a, ok := args.(pickle.Tuple)
		if !ok || len(a) != 1 {
			return nil, fmt.Errorf("%s: arguments %s, expected (script module id,)", unpackageScriptModule, pickle.Describe(args))
		}
		id, ok := a[0].(string)
		if !ok || id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
			return nil, fmt.Errorf("%s: script module id %s, expected a folder name under %s", unpackageScriptModule, pickle.Describe(a[0]), pkgTSCodeDir)
		}
		d.scripts++
		return &scriptModuleRef{id}, nil
	}
	return nil, fmt.Errorf("persistent id of kind %s is not supported ('storage' or 'reduce_package')", pickle.Describe(t[0]))
}

// describePickled names what a pickle held, for errors.
func describePickled(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a str"
	case []byte:
		return "bytes"
	case pickle.Tuple:
		return "a tuple"
	case *pickle.List:
		return "a list"
	case *pickle.Dict:
		return "a dict"
	case *pyObject:
		switch x.maker {
		case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor", "torch._utils._rebuild_parameter":
			return "a tensor"
		case "torch storage":
			return "a storage"
		}
		return "an object made by " + x.maker
	}
	return fmt.Sprintf("a %T", v)
}
