package loaders

import (
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/tscode"
)

// Model is a TorchScript module read from a torch.jit.save archive and
// compiled to a frozen graph: submodule calls and script functions
// inlined, parameters, buffers and module attributes bound as constants,
// training-only branches removed. Graph is ready for
// staticruntime.NewStaticModule.
type Model struct {
	Path       string
	Class      string       // the root module's class, e.g. __torch__.MLP
	Graph      *graph.Graph // forward, without the self input
	InputNames []string     // forward's parameters after self
	// Frozen reports whether the archive was written from a module frozen
	// with torch.jit.freeze (gosr freezes the others itself).
	Frozen bool
	// Version is the archive's format version (the "version" record).
	Version string

	archive   *Archive
	closeOnce sync.Once
	closeErr  error
}

// Load reads a TorchScript archive written by torch.jit.save (PyTorch 1.13
// or later, scripted or traced, frozen or not) and compiles its forward
// method. Weights are not copied: the graph's tensor constants view the
// memory-mapped archive, which stays mapped until Close and until every
// StaticModule prepared from the graph is closed or collected (see Close).
// The default Options bound what the file may cost (LoadOptions sets them).
func Load(path string) (*Model, error) {
	return LoadMethodOptions(path, "forward", nil)
}

// LoadOptions is Load with limits (nil: the defaults).
func LoadOptions(path string, o *Options) (*Model, error) {
	return LoadMethodOptions(path, "forward", o)
}

// LoadMethod is Load for a method other than forward.
func LoadMethod(path, method string) (*Model, error) {
	return LoadMethodOptions(path, method, nil)
}

// LoadMethodOptions is LoadMethod with limits (nil: the defaults).
func LoadMethodOptions(path, method string, o *Options) (*Model, error) {
	a, err := OpenArchiveOptions(path, o)
	if err != nil {
		return nil, err
	}
	m, err := loadScript(a, method)
	if err != nil {
		a.Close()
		return nil, err
	}
	m.Path = path
	return m, nil
}

// LoadBytes is Load for an archive already in memory (tensors view data).
func LoadBytes(name string, data []byte) (*Model, error) {
	return LoadBytesOptions(name, data, nil)
}

// LoadBytesOptions is LoadBytes with limits (nil: the defaults).
func LoadBytesOptions(name string, data []byte, o *Options) (*Model, error) {
	a, err := ParseArchiveOptions(name, data, o)
	if err != nil {
		return nil, err
	}
	m, err := loadScript(a, "forward")
	if err != nil {
		return nil, err
	}
	m.Path = name
	return m, nil
}

// Close drops the model's reference to its archive. A StaticModule
// prepared from Graph before Close retained the archive (Graph.Backing)
// and keeps it mapped until the module is closed or collected, so closing
// the model early is safe. Once nothing retains it the archive is
// unmapped: preparing Graph then is an error, and the graph's tensor
// constants must not be read by other means. Close is idempotent and safe
// to call from several goroutines.
func (m *Model) Close() error {
	m.closeOnce.Do(func() {
		if m.archive != nil {
			m.closeErr = m.archive.Close()
		}
	})
	return m.closeErr
}

// own makes m the holder of a reference to a (taken by the caller) and a
// the backing of m's graph.
func (m *Model) own(a *Archive) {
	m.archive = a
	m.Graph.Backing = a
}

func loadScript(a *Archive, method string) (*Model, error) {
	if !a.Has("data.pkl") {
		return nil, fmt.Errorf("archive %s: no data.pkl entry: not a TorchScript archive written by torch.jit.save", a.Name())
	}
	if !a.Has("code/__torch__.py") && !hasCode(a) {
		return nil, fmt.Errorf("archive %s: no code/ entries: a torch.save file, not a TorchScript archive (read it with ReadTorchSave)", a.Name())
	}
	// The version is only reported, but an archive whose version record
	// cannot be read (a bomb in its place) is not one to trust further.
	version := ""
	if a.Has("version") {
		b, err := a.Record("version")
		if err != nil {
			return nil, err
		}
		version = strings.TrimSpace(string(b))
	}
	root, err := UnpickleTorch(a, "data.pkl", "data")
	if err != nil {
		return nil, err
	}
	obj, ok := root.Ref().(*ScriptObject)
	if root.Kind() != ivalue.KindObject || !ok {
		return nil, fmt.Errorf("archive %s: data.pkl holds a %s, not a module object", a.Name(), root.Kind())
	}
	var consts []ivalue.IValue
	if a.Has("constants.pkl") {
		cv, err := UnpickleTorch(a, "constants.pkl", "constants")
		if err != nil {
			return nil, err
		}
		if cv.Kind() != ivalue.KindTuple && cv.Kind() != ivalue.KindList {
			return nil, fmt.Errorf("archive %s: constants.pkl holds a %s, expected a tuple", a.Name(), cv.Kind())
		}
		consts = cv.List().Items
	}
	code := newCodeBudget(a)
	src := func(entry string) ([]byte, error) {
		if !a.Has(entry) {
			return nil, fmt.Errorf("archive %s: entry %q: %w", a.Name(), entry, fs.ErrNotExist)
		}
		return code.read(entry, a.Record)
	}
	res, err := tscode.Compile(obj, consts, src, method)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", a.Name(), err)
	}
	if err := checkGraphSize(res.Graph, a.lim.MaxGraphNodes); err != nil {
		return nil, fmt.Errorf("archive %s: method %s: %w", a.Name(), method, err)
	}
	m := &Model{
		Class:      obj.Class,
		Graph:      res.Graph,
		InputNames: res.InputNames,
		Frozen:     isFrozen(obj),
		Version:    version,
	}
	m.own(a)
	return m, nil
}

func hasCode(a *Archive) bool {
	for _, r := range a.Records() {
		if strings.HasPrefix(r, "code/") {
			return true
		}
	}
	return false
}

// isFrozen: torch.jit.freeze leaves no tensors or submodules on the root.
func isFrozen(o *ScriptObject) bool {
	for _, v := range o.Attrs {
		if v.Kind() == ivalue.KindTensor || v.Kind() == ivalue.KindObject {
			return false
		}
	}
	return true
}

// ClassName is the object's qualified class name (tscode.Object).
func (o *ScriptObject) ClassName() string { return o.Class }

// GetAttr returns an attribute by name (tscode.Object).
func (o *ScriptObject) GetAttr(name string) (ivalue.IValue, bool) {
	v, ok := o.Attrs[name]
	return v, ok
}
