// Package pickle reads Python pickles (protocols 0 to 5) without executing
// anything, and writes protocol 2 pickles.
//
// The unpickler builds plain Go values for Python's built-in types and
// hands every global reference (GLOBAL, STACK_GLOBAL, INST, OBJ) to the
// caller's Options.Global hook: it never constructs a class or calls a
// function on its own, so a pickle can only do what the hook allows.
//
// Values: None is nil; bool; int64 (*big.Int beyond int64); float64;
// string; []byte (BYTES, BINBYTES, BYTEARRAY8, ...); Tuple; *List; *Dict;
// *Set; and whatever the hooks return.
package pickle

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Tuple is a Python tuple.
type Tuple []any

// List is a Python list. It is a pointer type so that shared references
// (the memo) stay shared and APPEND after memoization reaches every user.
type List struct {
	Items []any
}

// Set is a Python set or frozenset, in insertion order.
type Set struct {
	Items  []any
	Frozen bool
	index  map[any]int
}

// Dict is a Python dict, in insertion order. Keys must be hashable in
// Python's sense (no lists, dicts or sets); equal keys (1, 1.0, True)
// share one entry, as in Python.
type Dict struct {
	Keys   []any
	Values []any
	index  map[any]int
}

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{} }

// Len returns the number of entries.
func (d *Dict) Len() int { return len(d.Keys) }

// Get returns the value stored under k.
func (d *Dict) Get(k any) (any, bool) {
	h, err := hashKey(k, maxKeyDepth, nil)
	if err != nil || d.index == nil {
		return nil, false
	}
	i, ok := d.index[h]
	if !ok {
		return nil, false
	}
	return d.Values[i], true
}

// Set stores v under k, keeping the position of an existing equal key (as
// a Python dict does). It fails for an unhashable key.
func (d *Dict) Set(k, v any) error { return d.set(k, v, nil) }

func (d *Dict) set(k, v any, budget *int) error {
	h, err := hashKey(k, maxKeyDepth, budget)
	if err != nil {
		return err
	}
	if d.index == nil {
		d.index = make(map[any]int)
	}
	if i, ok := d.index[h]; ok {
		d.Values[i] = v
		return nil
	}
	d.index[h] = len(d.Keys)
	d.Keys = append(d.Keys, k)
	d.Values = append(d.Values, v)
	return nil
}

// Add inserts v unless an equal item is present.
func (s *Set) Add(v any) error { return s.add(v, nil) }

func (s *Set) add(v any, budget *int) error {
	h, err := hashKey(v, maxKeyDepth, budget)
	if err != nil {
		return err
	}
	if s.index == nil {
		s.index = make(map[any]int)
	}
	if _, ok := s.index[h]; ok {
		return nil
	}
	s.index[h] = len(s.Items)
	s.Items = append(s.Items, v)
	return nil
}

// Contains reports whether an item equal to v is in the set.
func (s *Set) Contains(v any) bool {
	h, err := hashKey(v, maxKeyDepth, nil)
	if err != nil || s.index == nil {
		return false
	}
	_, ok := s.index[h]
	return ok
}

// defaultHashBudget bounds the work of one Set/Add/Get outside the
// unpickler (which budgets by its input size).
const defaultHashBudget = 1 << 20

// maxKeyDepth bounds the nesting of tuple keys (hashing recurses).
const maxKeyDepth = 64

// tupleKey is the hash key of a tuple: its items' keys, encoded.
type tupleKey string

// bigKey is the hash key of a *big.Int that does not fit an int64.
type bigKey string

// frozenKey is the hash key of a frozenset: its items' keys, sorted.
type frozenKey string

// hashKey maps a hashable Python value to a comparable Go value such that
// Python-equal values give equal keys. budget, when set, is decremented
// by the work done (hostile pickles could otherwise share one deep tuple
// many times and make hashing exponential).
func hashKey(k any, depth int, budget *int) (any, error) {
	if budget == nil {
		b := defaultHashBudget
		budget = &b
	}
	*budget--
	switch v := k.(type) {
	case string:
		*budget -= len(v) / 64
	case []byte:
		*budget -= len(v) / 64
	}
	if *budget < 0 {
		return nil, fmt.Errorf("hashing dict keys or set items takes more work than the input size allows")
	}
	switch v := k.(type) {
	case nil, string:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case float64:
		// Integral floats equal the int of the same value in Python.
		if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
			return int64(v), nil
		}
		if math.IsNaN(v) {
			// NaN is never equal to itself; Python keeps NaN keys apart by
			// identity, which plain values do not have: treat all NaNs as one.
			return "\x00nan", nil
		}
		return v, nil
	case *big.Int:
		if v.IsInt64() {
			return v.Int64(), nil
		}
		// Hexadecimal, which takes linear time (LONG4 may hold an int of
		// millions of digits, whose decimal form is superlinear).
		*budget -= v.BitLen() / 512
		if *budget < 0 {
			return nil, fmt.Errorf("hashing dict keys or set items takes more work than the input size allows")
		}
		return bigKey(v.Text(16)), nil
	case []byte:
		return "\x00bytes:" + string(v), nil
	case Tuple:
		if depth <= 0 {
			return nil, fmt.Errorf("tuple key nested more than %d deep", maxKeyDepth)
		}
		var b strings.Builder
		for _, it := range v {
			h, err := hashKey(it, depth-1, budget)
			if err != nil {
				return nil, err
			}
			s := fmt.Sprintf("%T:%v", h, h)
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
		return tupleKey(b.String()), nil
	case *Set:
		if !v.Frozen {
			return nil, fmt.Errorf("unhashable type: 'set'")
		}
		parts := make([]string, 0, len(v.Items))
		for _, it := range v.Items {
			h, err := hashKey(it, depth-1, budget)
			if err != nil {
				return nil, err
			}
			parts = append(parts, fmt.Sprintf("%T:%v", h, h))
		}
		sort.Strings(parts)
		return frozenKey(strings.Join(parts, "\x00")), nil
	case *List:
		return nil, fmt.Errorf("unhashable type: 'list'")
	case *Dict:
		return nil, fmt.Errorf("unhashable type: 'dict'")
	}
	// Objects made by hooks hash by identity, as Python objects do by
	// default; only pointers are accepted (other Go values may not be
	// comparable at all).
	if rv := reflect.ValueOf(k); rv.Kind() == reflect.Pointer {
		return k, nil
	}
	return nil, fmt.Errorf("unhashable key of Go type %T", k)
}

// Callable is what REDUCE (and INST/OBJ when the global is not a Class)
// calls: a function or class that a Global hook chose to allow.
type Callable interface {
	Call(args []any) (any, error)
}

// Class is what NEWOBJ and NEWOBJ_EX instantiate (cls.__new__(cls, *args,
// **kwargs)); kwargs is nil for NEWOBJ.
type Class interface {
	New(args []any, kwargs *Dict) (any, error)
}

// Buildable is what BUILD (obj.__setstate__(state) or the instance dict
// update) calls.
type Buildable interface {
	SetState(state any) error
}

// ItemSetter lets SETITEM/SETITEMS fill objects other than *Dict (e.g. an
// OrderedDict a hook returned).
type ItemSetter interface {
	SetItem(k, v any) error
}

// Appender lets APPEND/APPENDS fill objects other than *List.
type Appender interface {
	Append(v any) error
}

// Global names a module-level object; the pickler writes it with GLOBAL.
type Global struct {
	Module, Name string
}

func (g Global) String() string { return g.Module + "." + g.Name }
