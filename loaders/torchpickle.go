package loaders

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/pickle"
)

// ScriptObject is an instance of a TorchScript class ("__torch__.*") from a
// pickle: a module or a scripted class object.
type ScriptObject struct {
	Class string                   // qualified, e.g. "__torch__.torch.nn.modules.linear.Linear"
	Names []string                 // attribute names in pickled order
	Attrs map[string]ivalue.IValue // attribute values
	// State is what BUILD got when it was not an attribute dict (classes
	// with __getstate__/__setstate__); nil otherwise.
	State *ivalue.IValue

	raw    any // BUILD's state, converted once the whole pickle is read
	hasRaw bool
}

// SetState is BUILD (pickle.Buildable); the state is converted later,
// when every object it may refer to is complete.
func (o *ScriptObject) SetState(state any) error {
	if o.hasRaw {
		return fmt.Errorf("object of class %s built twice", o.Class)
	}
	o.raw, o.hasRaw = state, true
	return nil
}

// scriptClass is a "__torch__.*" global: NEWOBJ makes an empty object.
type scriptClass struct{ name string }

func (c scriptClass) New(args []any, kwargs *pickle.Dict) (any, error) {
	return &ScriptObject{Class: c.name, Attrs: map[string]ivalue.IValue{}}, nil
}

// storageClass is a torch.*Storage global: its dtype, for persistent ids.
type storageClass struct {
	name  string
	dtype ivalue.DType
}

// storageRef is what a persistent id resolves to: the record's bytes.
type storageRef struct {
	key     string
	dtype   ivalue.DType
	numel   int
	storage *ivalue.Storage
}

// orderedDict is collections.OrderedDict(): filled by SETITEMS; BUILD
// (a state_dict's _metadata attribute) is accepted and dropped.
type orderedDict struct{ d pickle.Dict }

func (o *orderedDict) SetItem(k, v any) error { return o.d.Set(k, v) }
func (o *orderedDict) SetState(any) error     { return nil }

type deviceValue struct{ name string }

type dtypeValue struct{ dtype ivalue.DType }

var storageDTypes = map[string]ivalue.DType{
	"FloatStorage": ivalue.Float32, "DoubleStorage": ivalue.Float64, "HalfStorage": ivalue.Float16,
	"BFloat16Storage": ivalue.BFloat16, "LongStorage": ivalue.Int64, "IntStorage": ivalue.Int32,
	"ShortStorage": ivalue.Int16, "CharStorage": ivalue.Int8, "ByteStorage": ivalue.Uint8,
	"BoolStorage": ivalue.Bool, "UntypedStorage": ivalue.Uint8,
}

var torchDTypes = map[string]ivalue.DType{
	"float32": ivalue.Float32, "float": ivalue.Float32, "float64": ivalue.Float64, "double": ivalue.Float64,
	"float16": ivalue.Float16, "half": ivalue.Float16, "bfloat16": ivalue.BFloat16,
	"int64": ivalue.Int64, "long": ivalue.Int64, "int32": ivalue.Int32, "int": ivalue.Int32,
	"int16": ivalue.Int16, "short": ivalue.Int16, "int8": ivalue.Int8, "uint8": ivalue.Uint8, "bool": ivalue.Bool,
}

// torchGlobals are the functions a PyTorch pickle may call; none runs
// anything but the rebuilding of data.
func (u *torchUnpickler) globals() map[string]any {
	identity := pickle.Func(func(a []any) (any, error) {
		if len(a) < 1 {
			return nil, fmt.Errorf("expected an argument")
		}
		return a[0], nil
	})
	return map[string]any{
		"torch._utils._rebuild_tensor_v2":                  pickle.Func(u.rebuildTensor),
		"torch._utils._rebuild_tensor":                     pickle.Func(u.rebuildTensor),
		"torch._utils._rebuild_parameter":                  pickle.Func(rebuildParameter),
		"torch._utils._rebuild_parameter_with_state":       pickle.Func(rebuildParameter),
		"collections.OrderedDict":                          pickle.Func(newOrderedDict),
		"torch.jit._pickle.build_intlist":                  identity,
		"torch.jit._pickle.build_doublelist":               identity,
		"torch.jit._pickle.build_boollist":                 identity,
		"torch.jit._pickle.build_tensorlist":               identity,
		"torch.jit._pickle.build_genericlist":              identity,
		"torch.jit._pickle.restore_type_tag":               identity,
		"torch.device":                                     pickle.Func(newDevice),
		"torch.Size":                                       pickle.Func(newSize),
		"torch.storage.UntypedStorage / torch.*Storage":    nil, // listed for errors only
		"torch.float32 (and other torch dtypes)":           nil,
		"__torch__.* (TorchScript classes)":                nil,
		"_codecs.encode, builtins.set/frozenset/bytearray": nil,
	}
}

// torchUnpickler reads one pickle of an archive.
type torchUnpickler struct {
	a        *Archive
	rec, dir string
	storages map[string]*storageRef
	table    map[string]any
	conv     map[any]ivalue.IValue
	busy     map[any]bool
	// budget is the values convert may still make (Options.MaxPickleItems):
	// tuples are not shared, so a tuple reached through many paths is
	// converted each time.
	budget int
}

func (u *torchUnpickler) global(module, name string) (any, error) {
	full := module + "." + name
	if module == "__torch__" || strings.HasPrefix(module, "__torch__.") {
		return scriptClass{full}, nil
	}
	if module == "torch" || module == "torch.cuda" || module == "torch.storage" {
		if dt, ok := storageDTypes[name]; ok {
			return storageClass{full, dt}, nil
		}
	}
	if module == "torch" {
		if dt, ok := torchDTypes[name]; ok {
			return dtypeValue{dt}, nil
		}
	}
	if module == "_codecs" || module == "builtins" || module == "__builtin__" {
		// bytes, sets and bytearrays as Python's pickler writes them (data
		// only; sets are rejected when converted).
		if g, err := pickle.BuiltinGlobal(module, name); err == nil {
			return g, nil
		}
	}
	if module == "torch.tensor" { // renamed in PyTorch 1.9 (torch.load maps it too)
		full = "torch._tensor." + name
	}
	if g := u.table[full]; g != nil {
		return g, nil
	}
	names := make([]string, 0, len(u.table))
	for k := range u.table {
		names = append(names, k)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("global %s is not supported (supported: %s)", full, strings.Join(names, ", "))
}

func (u *torchUnpickler) persistentLoad(pid any) (any, error) {
	t, ok := pid.(pickle.Tuple)
	if !ok || len(t) < 5 {
		return nil, fmt.Errorf("persistent id %s: expected ('storage', storage type, key, location, numel)", pickle.Describe(pid))
	}
	if kind, _ := t[0].(string); kind != "storage" {
		return nil, fmt.Errorf("persistent id of kind %s is not supported (only 'storage')", pickle.Describe(t[0]))
	}
	cls, ok := t[1].(storageClass)
	if !ok {
		return nil, fmt.Errorf("persistent id: storage type is %T, expected a torch.*Storage class", t[1])
	}
	key, ok := t[2].(string)
	if !ok {
		return nil, fmt.Errorf("persistent id: storage key is %T, expected a str", t[2])
	}
	if len(key) > maxKey {
		return nil, fmt.Errorf("persistent id: storage key of %d bytes, expected at most %d (a zip entry name)", len(key), maxKey)
	}
	numel, ok := t[4].(int64)
	if !ok || numel < 0 {
		return nil, fmt.Errorf("persistent id for storage %s: numel is %s, expected a non-negative int", pickle.Describe(key), pickle.Describe(t[4]))
	}
	if s, ok := u.storages[key]; ok {
		if s.dtype != cls.dtype {
			return nil, fmt.Errorf("storage %s used as %s and as %s", pickle.Describe(key), s.dtype, cls.dtype)
		}
		return s, nil
	}
	entry := u.dir + "/" + key
	rec, err := u.a.Record(entry)
	if err != nil {
		return nil, err
	}
	es := int64(cls.dtype.Size())
	if numel > int64(len(rec))/es {
		return nil, fmt.Errorf("archive %s: entry %q: %d bytes, but storage %s needs %d %s elements (%s)", u.a.Name(), entry, len(rec), pickle.Describe(key), numel, cls.dtype, cls.name)
	}
	b := rec[: numel*es : numel*es]
	if len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(es) != 0 {
		// Typed views of misaligned memory are not safe in Go.
		c := ivalue.AlignedBytes(len(b))
		copy(c, b)
		b = c
	}
	s := &storageRef{key: key, dtype: cls.dtype, numel: int(numel), storage: &ivalue.Storage{Data: b}}
	u.storages[key] = s
	return s, nil
}

func intsOf(what string, v any) ([]int, error) {
	var items []any
	switch x := v.(type) {
	case pickle.Tuple:
		items = x
	case *pickle.List:
		items = x.Items
	default:
		return nil, fmt.Errorf("%s is %T, expected a tuple of ints", what, v)
	}
	out := make([]int, len(items))
	for i, it := range items {
		n, ok := it.(int64)
		if !ok || n < 0 || n > math.MaxInt32*int64(1<<16) {
			return nil, fmt.Errorf("%s[%d] is %s, expected a non-negative int", what, i, pickle.Describe(it))
		}
		out[i] = int(n)
	}
	return out, nil
}

// rebuildTensor is torch._utils._rebuild_tensor_v2(storage, storage_offset,
// size, stride, requires_grad, backward_hooks[, metadata]); requires_grad,
// hooks and metadata do not matter for inference.
func (u *torchUnpickler) rebuildTensor(a []any) (any, error) {
	if len(a) < 4 {
		return nil, fmt.Errorf("_rebuild_tensor_v2: %d arguments, expected (storage, storage_offset, size, stride, ...)", len(a))
	}
	s, ok := a[0].(*storageRef)
	if !ok {
		return nil, fmt.Errorf("_rebuild_tensor_v2: storage is %T, expected a persistent storage", a[0])
	}
	off, ok := a[1].(int64)
	if !ok || off < 0 || off > int64(s.numel) {
		return nil, fmt.Errorf("_rebuild_tensor_v2: storage offset %s outside storage %s of %d elements", pickle.Describe(a[1]), pickle.Describe(s.key), s.numel)
	}
	sizes, err := intsOf("size", a[2])
	if err != nil {
		return nil, fmt.Errorf("_rebuild_tensor_v2: %w", err)
	}
	strides, err := intsOf("stride", a[3])
	if err != nil {
		return nil, fmt.Errorf("_rebuild_tensor_v2: %w", err)
	}
	if len(strides) != len(sizes) {
		return nil, fmt.Errorf("_rebuild_tensor_v2: %d strides for %d sizes", len(strides), len(sizes))
	}
	// The sizes' count must not overflow (torch.load: "numel: integer
	// multiplication overflow"), and the last element reached must lie in
	// the storage, both computed without overflow (ViewBytes).
	need, err := ivalue.ViewBytes(s.dtype, int(off), sizes, strides)
	if err != nil {
		return nil, fmt.Errorf("_rebuild_tensor_v2 over storage %s: %w", pickle.Describe(s.key), err)
	}
	if es := s.dtype.Size(); need > s.numel*es {
		return nil, fmt.Errorf("_rebuild_tensor_v2: sizes %s strides %s offset %d reach beyond storage %s of %d elements", pickle.Describe(sizes), pickle.Describe(strides), off, pickle.Describe(s.key), s.numel)
	}
	t, err := ivalue.FromStorage(s.dtype, s.storage, int(off), sizes, strides)
	if err != nil {
		return nil, fmt.Errorf("_rebuild_tensor_v2: %w", err)
	}
	return t, nil
}

// rebuildParameter is torch._utils._rebuild_parameter(data, requires_grad,
// backward_hooks[, state]): a Parameter is its tensor here.
func rebuildParameter(a []any) (any, error) {
	if len(a) < 1 {
		return nil, fmt.Errorf("_rebuild_parameter: no data")
	}
	t, ok := a[0].(*ivalue.Tensor)
	if !ok {
		return nil, fmt.Errorf("_rebuild_parameter: data is %T, expected a tensor", a[0])
	}
	return t, nil
}

func newOrderedDict(a []any) (any, error) {
	if len(a) != 0 {
		return nil, fmt.Errorf("collections.OrderedDict: expected no arguments, got %d", len(a))
	}
	return &orderedDict{}, nil
}

func newDevice(a []any) (any, error) {
	if len(a) < 1 {
		return nil, fmt.Errorf("torch.device: no arguments")
	}
	s, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("torch.device: argument is %T, expected a str", a[0])
	}
	if len(a) == 2 {
		if i, ok := a[1].(int64); ok {
			s = fmt.Sprintf("%s:%d", s, i)
		}
	}
	return deviceValue{s}, nil
}

func newSize(a []any) (any, error) {
	if len(a) == 0 {
		return pickle.Tuple{}, nil
	}
	switch x := a[0].(type) {
	case pickle.Tuple:
		return x, nil
	case *pickle.List:
		return pickle.Tuple(x.Items), nil
	}
	return nil, fmt.Errorf("torch.Size: argument is %T, expected a tuple", a[0])
}

// UnpickleTorch reads the pickle rec of archive a ("data.pkl",
// "constants.pkl") as PyTorch's unpickler does. Tensor storages come from
// the records storageDir/<key> ("data", "constants") and are not copied:
// tensors view the archive's memory (see Archive for how long that stays
// valid), and tensors that shared a storage in PyTorch share one here.
//
// Python values map to IValues: int -> Int (beyond int64: an error),
// float -> Double, bool, str -> String, bytes -> String (TorchScript has no
// bytes type), None, tuple -> Tuple, list -> List, dict and OrderedDict ->
// Dict (insertion order kept), torch.device -> Device, a torch dtype ->
// Int (its ScalarType), a bare storage -> a 1-d tensor over it, and
// "__torch__.*" objects -> Object(*ScriptObject). Sets are an error.
func UnpickleTorch(a *Archive, rec string, storageDir string) (ivalue.IValue, error) {
	data, err := a.Record(rec)
	if err != nil {
		return ivalue.None(), err
	}
	items := a.lim.pickleItems(len(data))
	u := &torchUnpickler{a: a, rec: rec, dir: strings.TrimSuffix(storageDir, "/"),
		storages: map[string]*storageRef{}, conv: map[any]ivalue.IValue{}, busy: map[any]bool{}, budget: items}
	u.table = u.globals()
	v, err := pickle.Unpickle(data, &pickle.Options{Name: rec, Global: u.global, PersistentLoad: u.persistentLoad,
		MaxStack: items, MaxMemo: items, MaxValues: items})
	if err != nil {
		return ivalue.None(), fmt.Errorf("archive %s: %w%s", a.Name(), err, itemsHint(err))
	}
	iv, err := u.convert(v, 0)
	if err != nil {
		return ivalue.None(), fmt.Errorf("archive %s: pickle %s: %w", a.Name(), rec, err)
	}
	return iv, nil
}

const maxConvertDepth = 1000

// maxKey bounds a storage key: it names a zip entry, whose name has at
// most 65535 bytes.
const maxKey = 1 << 16

// itemsHint points at the option when the unpickler ran into its limits.
func itemsHint(err error) string {
	if s := err.Error(); strings.Contains(s, "stack holds more than") || strings.Contains(s, "memo holds more than") || strings.Contains(s, "the pickle makes more than") {
		return " (Options.MaxPickleItems)"
	}
	return ""
}

// convert maps an unpickled value to an IValue. Containers convert once
// (shared references stay shared; shared DAGs cost linear time); a
// container that contains itself is an error, as IValues are trees.
func (u *torchUnpickler) convert(v any, depth int) (ivalue.IValue, error) {
	if depth > maxConvertDepth {
		return ivalue.None(), fmt.Errorf("values nested more than %d deep", maxConvertDepth)
	}
	if u.budget--; u.budget < 0 {
		return ivalue.None(), fmt.Errorf("the pickle makes more values than its item limit allows (Options.MaxPickleItems; shared tuples count each time they are reached)")
	}
	switch x := v.(type) {
	case nil:
		return ivalue.None(), nil
	case bool:
		return ivalue.FromBool(x), nil
	case int64:
		return ivalue.FromInt(x), nil
	case *big.Int:
		return ivalue.None(), fmt.Errorf("integer %s does not fit in 64 bits", pickle.Describe(x))
	case float64:
		return ivalue.FromDouble(x), nil
	case string:
		return ivalue.FromString(x), nil
	case []byte:
		return ivalue.FromString(string(x)), nil
	case *ivalue.Tensor:
		return ivalue.FromTensor(x), nil
	case *storageRef:
		t, err := ivalue.FromStorage(x.dtype, x.storage, 0, []int{x.numel}, nil)
		if err != nil {
			return ivalue.None(), err
		}
		return ivalue.FromTensor(t), nil
	case deviceValue:
		return ivalue.FromDevice(x.name), nil
	case dtypeValue:
		return ivalue.FromInt(x.dtype.ScalarType()), nil
	case pickle.Tuple:
		items, err := u.convertAll(x, depth)
		if err != nil {
			return ivalue.None(), err
		}
		return ivalue.NewTuple(items...), nil
	}
	// Reference types: convert once.
	if iv, ok := u.conv[v]; ok {
		return iv, nil
	}
	if u.busy[v] {
		return ivalue.None(), fmt.Errorf("a %s contains itself", typeLabel(v))
	}
	u.busy[v] = true
	defer delete(u.busy, v)
	var iv ivalue.IValue
	switch x := v.(type) {
	case *pickle.List:
		items, err := u.convertAll(x.Items, depth)
		if err != nil {
			return ivalue.None(), err
		}
		iv = ivalue.NewList(items...)
	case *pickle.Dict:
		d, err := u.convertDict(x, depth)
		if err != nil {
			return ivalue.None(), err
		}
		iv = d
	case *orderedDict:
		d, err := u.convertDict(&x.d, depth)
		if err != nil {
			return ivalue.None(), err
		}
		iv = d
	case *ScriptObject:
		if err := u.convertObject(x, depth); err != nil {
			return ivalue.None(), err
		}
		iv = ivalue.Object(x)
	case *pickle.Set:
		return ivalue.None(), fmt.Errorf("sets are not supported (TorchScript has none)")
	default:
		return ivalue.None(), fmt.Errorf("%s cannot be a value (it is only an argument of a supported call)", typeLabel(v))
	}
	u.conv[v] = iv
	return iv, nil
}

func (u *torchUnpickler) convertAll(items []any, depth int) ([]ivalue.IValue, error) {
	out := make([]ivalue.IValue, len(items))
	for i, it := range items {
		v, err := u.convert(it, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (u *torchUnpickler) convertDict(d *pickle.Dict, depth int) (ivalue.IValue, error) {
	out := &ivalue.Dict{Keys: make([]ivalue.IValue, 0, d.Len()), Values: make([]ivalue.IValue, 0, d.Len())}
	for i := range d.Keys {
		k, err := u.convert(d.Keys[i], depth+1)
		if err != nil {
			return ivalue.None(), err
		}
		switch k.Kind() {
		case ivalue.KindString, ivalue.KindInt, ivalue.KindBool, ivalue.KindDouble, ivalue.KindTensor:
		default:
			return ivalue.None(), fmt.Errorf("dict key of type %s is not supported (str, int, bool, float, Tensor)", k.Kind())
		}
		v, err := u.convert(d.Values[i], depth+1)
		if err != nil {
			return ivalue.None(), err
		}
		// pickle.Dict already merged equal keys; no lookups needed.
		out.Keys = append(out.Keys, k)
		out.Values = append(out.Values, v)
	}
	return ivalue.DictOf(out), nil
}

func (u *torchUnpickler) convertObject(o *ScriptObject, depth int) error {
	if !o.hasRaw {
		return nil
	}
	raw := o.raw
	o.raw, o.hasRaw = nil, false
	if d, ok := raw.(*pickle.Dict); ok {
		names := make([]string, 0, d.Len())
		attrs := make(map[string]ivalue.IValue, d.Len())
		allStr := true
		for _, k := range d.Keys {
			if _, ok := k.(string); !ok {
				allStr = false
			}
		}
		if allStr {
			for i, k := range d.Keys {
				v, err := u.convert(d.Values[i], depth+1)
				if err != nil {
					return fmt.Errorf("%s.%s: %w", o.Class, k, err)
				}
				names = append(names, k.(string))
				attrs[k.(string)] = v
			}
			o.Names, o.Attrs = names, attrs
			return nil
		}
	}
	v, err := u.convert(raw, depth+1)
	if err != nil {
		return fmt.Errorf("%s state: %w", o.Class, err)
	}
	o.State = &v
	return nil
}

func typeLabel(v any) string {
	switch x := v.(type) {
	case *pickle.List:
		return "list"
	case *pickle.Dict, *orderedDict:
		return "dict"
	case *ScriptObject:
		return "object of class " + x.Class
	case storageClass:
		return x.name
	case pickle.Func:
		return "a function"
	case scriptClass:
		return "class " + x.name
	}
	return fmt.Sprintf("%T", v)
}
