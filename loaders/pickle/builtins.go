package pickle

import (
	"fmt"
	"sort"
	"strings"
)

// Func adapts a Go function to Callable.
type Func func(args []any) (any, error)

// Call calls f.
func (f Func) Call(args []any) (any, error) { return f(args) }

// builtinData are the globals Python's own pickler uses to write plain
// data at protocols below 5: none of them runs code.
var builtinData = map[string]Func{
	"_codecs.encode":     codecsEncode,
	"builtins.set":       func(a []any) (any, error) { return makeSet(a, false) },
	"builtins.frozenset": func(a []any) (any, error) { return makeSet(a, true) },
	"builtins.bytearray": makeBytearray,
	"builtins.bytes":     makeBytearray,
	"collections.OrderedDict": func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, fmt.Errorf("collections.OrderedDict: expected no arguments, got %d", len(a))
		}
		return &Dict{}, nil
	},
}

// BuiltinGlobal is an Options.Global that allows only the globals Python's
// pickler needs for plain data: _codecs.encode (bytes at protocols 0 to 2),
// builtins.set/frozenset (sets below protocol 4), builtins.bytearray/bytes
// (below protocol 5) and collections.OrderedDict (as a *Dict). Python 2
// names (__builtin__) are accepted too.
func BuiltinGlobal(module, name string) (any, error) {
	mod := module
	if mod == "__builtin__" {
		mod = "builtins"
	}
	if f, ok := builtinData[mod+"."+name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("global %s.%s is not supported (supported: %s)", module, name, BuiltinNames())
}

// BuiltinNames lists the globals BuiltinGlobal allows.
func BuiltinNames() string {
	names := make([]string, 0, len(builtinData))
	for k := range builtinData {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// codecsEncode is _codecs.encode(text, "latin1"): how protocols 0 to 2
// write bytes (each byte as one code point below 256).
func codecsEncode(a []any) (any, error) {
	if len(a) < 1 || len(a) > 2 {
		return nil, fmt.Errorf("_codecs.encode: expected (str, encoding), got %d arguments", len(a))
	}
	s, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("_codecs.encode: expected a str, got %s", typeName(a[0]))
	}
	enc := "utf-8"
	if len(a) == 2 {
		if enc, ok = a[1].(string); !ok {
			return nil, fmt.Errorf("_codecs.encode: encoding is %s, expected a str", typeName(a[1]))
		}
	}
	switch strings.ToLower(strings.ReplaceAll(enc, "_", "-")) {
	case "latin1", "latin-1", "iso-8859-1", "iso8859-1":
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				return nil, fmt.Errorf("_codecs.encode: code point %U is not latin-1", r)
			}
			out = append(out, byte(r))
		}
		return out, nil
	case "utf-8", "utf8":
		return []byte(s), nil
	}
	return nil, fmt.Errorf("_codecs.encode: encoding %q is not supported (latin1, utf-8)", enc)
}

func iterable(what string, v any) ([]any, error) {
	switch x := v.(type) {
	case *List:
		return x.Items, nil
	case Tuple:
		return x, nil
	case *Set:
		return x.Items, nil
	}
	return nil, fmt.Errorf("%s: expected a list or tuple, got %s", what, typeName(v))
}

func makeSet(a []any, frozen bool) (any, error) {
	s := &Set{Frozen: frozen}
	if len(a) == 0 {
		return s, nil
	}
	items, err := iterable("set", a[0])
	if err != nil {
		return nil, err
	}
	budget := 64*len(items) + 1<<16
	for _, it := range items {
		if err := s.add(it, &budget); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func makeBytearray(a []any) (any, error) {
	if len(a) == 0 {
		return []byte{}, nil
	}
	switch x := a[0].(type) {
	case []byte:
		return append([]byte{}, x...), nil
	case string: // bytearray(text, encoding)
		return codecsEncode(a)
	}
	items, err := iterable("bytearray", a[0])
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(items))
	for i, it := range items {
		n, ok := it.(int64)
		if !ok || n < 0 || n > 255 {
			return nil, fmt.Errorf("bytearray: item %d is %s, expected an int in 0..255", i, Describe(it))
		}
		out[i] = byte(n)
	}
	return out, nil
}
