package pickle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/hostile/gen"
)

// match compares got with the tagged JSON scripts/make_pickle_testdata.py
// writes (["int", "5"], ["list", [...]], ...).
func match(path string, want any, got any) error {
	w, ok := want.([]any)
	if !ok || len(w) == 0 {
		return fmt.Errorf("%s: bad expectation %v", path, want)
	}
	tag, _ := w[0].(string)
	var payload any
	if len(w) > 1 {
		payload = w[1]
	}
	mismatch := func() error { return fmt.Errorf("%s: got %T %v, want %v", path, got, got, want) }
	switch tag {
	case "none":
		if got != nil {
			return mismatch()
		}
	case "bool":
		if b, ok := got.(bool); !ok || b != payload.(bool) {
			return mismatch()
		}
	case "int":
		var s string
		switch g := got.(type) {
		case int64:
			s = strconv.FormatInt(g, 10)
		case *big.Int:
			s = g.String()
			if g.IsInt64() {
				return fmt.Errorf("%s: %v should have been an int64", path, g)
			}
		default:
			return mismatch()
		}
		if s != payload.(string) {
			return mismatch()
		}
	case "float":
		g, ok := got.(float64)
		if !ok {
			return mismatch()
		}
		f, err := strconv.ParseFloat(payload.(string), 64)
		if err != nil {
			return err
		}
		if !(math.IsNaN(f) && math.IsNaN(g)) && math.Float64bits(f) != math.Float64bits(g) {
			return mismatch()
		}
	case "str":
		if s, ok := got.(string); !ok || s != payload.(string) {
			return mismatch()
		}
	case "bytes", "bytearray":
		b, ok := got.([]byte)
		h, _ := hex.DecodeString(payload.(string))
		if !ok || string(b) != string(h) {
			return mismatch()
		}
	case "list", "tuple", "set", "frozenset":
		var items []any
		switch g := got.(type) {
		case *List:
			if tag != "list" {
				return mismatch()
			}
			items = g.Items
		case Tuple:
			if tag != "tuple" {
				return mismatch()
			}
			items = g
		case *Set:
			if (tag == "frozenset") != g.Frozen || tag == "list" || tag == "tuple" {
				return mismatch()
			}
			items = g.Items
		default:
			return mismatch()
		}
		ws := payload.([]any)
		if len(ws) != len(items) {
			return fmt.Errorf("%s: %d items, want %d", path, len(items), len(ws))
		}
		for i := range ws {
			if tag == "set" || tag == "frozenset" {
				// Python's set order depends on hashes: any order will do.
				found := false
				for _, it := range items {
					found = found || match(path, ws[i], it) == nil
				}
				if !found {
					return fmt.Errorf("%s: %v missing from the set", path, ws[i])
				}
				continue
			}
			if err := match(fmt.Sprintf("%s[%d]", path, i), ws[i], items[i]); err != nil {
				return err
			}
		}
	case "dict":
		d, ok := got.(*Dict)
		if !ok {
			return mismatch()
		}
		ws := payload.([]any)
		if len(ws) != d.Len() {
			return fmt.Errorf("%s: %d entries, want %d", path, d.Len(), len(ws))
		}
		for i, kv := range ws {
			kv := kv.([]any)
			if err := match(fmt.Sprintf("%s.key%d", path, i), kv[0], d.Keys[i]); err != nil {
				return err
			}
			if err := match(fmt.Sprintf("%s[%v]", path, d.Keys[i]), kv[1], d.Values[i]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: unknown tag %q", path, tag)
	}
	return nil
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// The same nested structure, pickled by Python at every protocol.
func TestPythonProtocols(t *testing.T) {
	want := readJSON(t, filepath.Join("testdata", "expected.json"))
	for p := 0; p <= 5; p++ {
		t.Run(fmt.Sprintf("protocol%d", p), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("data_p%d.pkl", p)))
			require.NoError(t, err)
			got, err := Unpickle(data, &Options{Name: "data.pkl", Global: BuiltinGlobal})
			require.NoError(t, err)
			require.NoError(t, match("data", want, got))

			d := got.(*Dict)
			a, _ := d.Get("shared_a")
			b, _ := d.Get("shared_b")
			assert.Same(t, a.(*List), b.(*List), "a list referenced twice is one list")
			keys, _ := d.Get("dict_keys")
			v, ok := keys.(*Dict).Get(Tuple{int64(1), "t"})
			assert.True(t, ok)
			assert.Equal(t, "tuple", v)
			v, _ = keys.(*Dict).Get(2.5)
			assert.Equal(t, "float", v)
			v, _ = keys.(*Dict).Get(1.0) // equal to the int key 1, as in Python
			assert.Equal(t, "int", v)
		})
	}
}

func TestRecursiveList(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "recursive_p2.pkl"))
	require.NoError(t, err)
	got, err := Unpickle(data, nil)
	require.NoError(t, err)
	l := got.(*List)
	require.Len(t, l.Items, 2)
	assert.Equal(t, int64(1), l.Items[0])
	assert.Same(t, l, l.Items[1].(*List))
}

func TestOutOfBandBuffers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "oob_p5.pkl"))
	require.NoError(t, err)
	_, err = Unpickle(data, nil)
	assert.ErrorContains(t, err, "NEXT_BUFFER")
	got, err := Unpickle(data, &Options{Buffers: [][]byte{[]byte("out-of-band"), []byte("rw")}})
	require.NoError(t, err)
	assert.Equal(t, []any{[]byte("out-of-band"), []byte("rw")}, got.(*List).Items)
}

// point is a class a test hook allows.
type point struct {
	args   []any
	kwargs *Dict
	state  any
}

type pointClass struct{}

func (pointClass) New(args []any, kwargs *Dict) (any, error) {
	return &point{args: args, kwargs: kwargs}, nil
}

func (pointClass) Call(args []any) (any, error) { return &point{args: args}, nil }

func (p *point) SetState(s any) error { p.state = s; return nil }

func pointGlobal(module, name string) (any, error) {
	if name == "Point" || name == "PointArgs" {
		return pointClass{}, nil
	}
	return nil, fmt.Errorf("global %s.%s is not supported", module, name)
}

func TestObjects(t *testing.T) {
	for _, tc := range []struct {
		file   string
		args   []any
		kwargs map[string]any
	}{
		{"object_p2.pkl", []any{int64(1), "two"}, nil},                 // NEWOBJ, BUILD
		{"object_p4.pkl", []any{int64(1)}, map[string]any{"y": "two"}}, // NEWOBJ_EX, STACK_GLOBAL
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			got, err := Unpickle(data, &Options{Global: pointGlobal})
			require.NoError(t, err)
			p := got.(*point)
			assert.Equal(t, tc.args, p.args)
			if tc.kwargs != nil {
				require.NotNil(t, p.kwargs)
				for k, v := range tc.kwargs {
					g, ok := p.kwargs.Get(k)
					assert.True(t, ok)
					assert.Equal(t, v, g)
				}
			}
			st := p.state.(*Dict)
			assert.Equal(t, []any{"x", "y"}, st.Keys)
			assert.Equal(t, []any{int64(1), "two"}, st.Values)

			_, err = Unpickle(data, nil)
			assert.ErrorContains(t, err, "Point")
		})
	}
}

// Pickles that would run code in Python: each must fail at the global,
// with nothing run.
func TestMalicious(t *testing.T) {
	const marker = "/tmp/gosr_pickle_pwned"
	os.Remove(marker)
	for _, tc := range []struct{ file, global string }{
		{"malicious_os_system_reduce.pkl", "posix.system"},
		{"malicious_builtins_eval.pkl", "__builtin__.eval"},
		{"malicious_subprocess_stack_global.pkl", "subprocess.Popen"},
		{"malicious_inst_os_system.pkl", "os.system"},
		{"malicious_obj_os_system.pkl", "os.system"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			for _, g := range []func(string, string) (any, error){nil, BuiltinGlobal} {
				var asked []string
				hook := g
				if g != nil {
					hook = func(m, n string) (any, error) { asked = append(asked, m+"."+n); return g(m, n) }
				}
				_, err = Unpickle(data, &Options{Name: tc.file, Global: hook})
				require.Error(t, err)
				assert.Contains(t, err.Error(), "pickle "+tc.file+" at byte ")
				assert.Contains(t, err.Error(), "global "+tc.global+" is not supported")
				if g != nil {
					assert.Equal(t, []string{tc.global}, asked)
				}
			}
		})
	}
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "a malicious pickle ran")
}

// Hand-made pickles for the opcodes Python 3 no longer writes and the
// error paths.
func TestOpcodes(t *testing.T) {
	persist := func(pid any) (any, error) { return fmt.Sprintf("loaded(%v)", pid), nil }
	tests := []struct {
		name string
		data string
		want any
	}{
		{"INT bool", "I01\nI00\n\x86.", Tuple{true, false}},
		{"INT big", "I123456789012345678901234567890\n.", mustBig("123456789012345678901234567890")},
		{"LONG", "L-5L\n.", int64(-5)},
		{"FLOAT", "F-1.5e3\n.", -1500.0},
		{"FLOAT overflow is inf", "F1e400\n.", math.Inf(1)},
		{"STRING escapes", `S'a\n\x41\101\'\\z'` + "\n.", "a\nAA'\\z"},
		{"STRING dq", "S\"q\"\n.", "q"},
		{"UNICODE", `V\u00e9\U0001f389x\` + "\n.", "é🎉x\\"},
		{"PUT GET DUP POP", "(I1\np0\n0g0\n2l.", &List{Items: []any{int64(1), int64(1)}}},
		{"POP_MARK", "K\x01(K\x021.", int64(1)},
		{"POP pops a mark", "K\x01(0.", int64(1)},
		{"DICT SETITEM", "(S'a'\nI1\ndS'b'\nI2\ns.", nil},
		{"PERSID", "P7\n.", "loaded(7)"},
		{"BINPERSID", "K\x07Q.", "loaded(7)"},
		{"LONG1 negative", "\x8a\x02\x00\xff.", int64(-256)},
		{"LONG1 big", "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", new(big.Int).Lsh(big.NewInt(1), 64)},
		{"LONG4 zero", "\x8b\x00\x00\x00\x00.", int64(0)},
		{"BININT negative", "J\xfe\xff\xff\xff.", int64(-2)},
		{"BINSTRING", "T\x02\x00\x00\x00ab.", "ab"},
		{"SHORT_BINSTRING", "U\x02ab.", "ab"},
		{"BINBYTES", "B\x01\x00\x00\x00\xff.", []byte{0xff}},
		{"BINUNICODE8", "\x8d\x01\x00\x00\x00\x00\x00\x00\x00z.", "z"},
		{"FROZENSET", "\x8f(K\x01K\x01\x90.", &Set{Items: []any{int64(1)}}},
		{"TUPLE3", "K\x01K\x02K\x03\x87.", Tuple{int64(1), int64(2), int64(3)}},
		{"LONG_BINPUT/GET", "K\x05r\x00\x01\x00\x000j\x00\x01\x00\x00.", int64(5)},
		{"bytes after STOP ignored", "N.garbage", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unpickle([]byte(tc.data), &Options{PersistentLoad: persist})
			require.NoError(t, err)
			if tc.name == "DICT SETITEM" {
				d := got.(*Dict)
				assert.Equal(t, []any{"a", "b"}, d.Keys)
				assert.Equal(t, []any{int64(1), int64(2)}, d.Values)
				return
			}
			if s, ok := tc.want.(*Set); ok {
				g := got.(*Set)
				assert.Equal(t, s.Items, g.Items)
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("INST and OBJ", func(t *testing.T) {
		got, err := Unpickle([]byte("(K\x01imod\nPoint\n(cmod\nPoint\nK\x02o\x86."), &Options{Global: pointGlobal})
		require.NoError(t, err)
		tu := got.(Tuple)
		assert.Equal(t, []any{int64(1)}, tu[0].(*point).args)
		assert.Equal(t, []any{int64(2)}, tu[1].(*point).args)
	})
}

func mustBig(s string) *big.Int {
	x, _ := new(big.Int).SetString(s, 10)
	return x
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, data string
		opts       *Options
		want       string
	}{
		{"empty", "", nil, "pickle x at byte 0: truncated"},
		{"no STOP", "\x80\x02K\x01", nil, "at byte 4: truncated"},
		{"underflow", "\x80\x020.", nil, "at byte 2: stack underflow"},
		{"underflow across MARK", "K\x01(\x85.", nil, "at byte 3: stack underflow"},
		{"unknown opcode", "\xff.", nil, "at byte 0: unknown opcode 0xff"},
		{"protocol 6", "\x80\x06N.", nil, "unsupported pickle protocol 6"},
		{"memo miss", "h\x05.", nil, "memo index 5 was never stored"},
		{"huge BINUNICODE8", "\x8d\xff\xff\xff\xff\xff\xff\xff\xffx.", nil, "at byte 0: truncated"},
		{"huge BINBYTES", "B\xff\xff\xff\x7f.", nil, "needs 2147483647 bytes"},
		{"negative LONG4", "\x8b\xff\xff\xff\xff.", nil, "negative length"},
		{"negative BINSTRING", "T\xff\xff\xff\xff.", nil, "negative length"},
		{"EXT1", "\x82\x01.", nil, "extension registry"},
		{"odd SETITEMS", "}(K\x01u.", nil, "odd number of items"},
		{"unhashable key", "}]K\x01s.", nil, "unhashable type: 'list'"},
		{"APPEND to dict", "}K\x01a.", nil, "APPEND to a dict"},
		{"REDUCE on str", "X\x01\x00\x00\x00f)R.", nil, "REDUCE on a str"},
		{"REDUCE args not tuple", "NNR.", nil, "expected a tuple"},
		{"BUILD on list", "]}b.", nil, "BUILD on a list"},
		{"global without hook", "cos\nsystem\n.", nil, "global os.system is not supported"},
		{"persid without hook", "P1\n.", nil, "persistent id"},
		{"STRING unquoted", "Sabc\n.", nil, "must be quoted"},
		{"INT junk", "Iabc\n.", nil, "is not an integer"},
		{"INT too many digits", "I" + string(make([]byte, 5000)) + "\n.", nil, "exceeds the limit"},
		{"FLOAT junk", "Fx\n.", nil, "not a number"},
		{"PUT junk", "NpX\n.", nil, "not a memo index"},
		{"FRAME too long", "\x95\xff\x00\x00\x00\x00\x00\x00\x00N.", nil, "frame of 255 bytes"},
		{"mark limit", "((((N.", &Options{MaxMarks: 3}, "more than 3 nested MARKs"},
		{"stack limit", "NNNN.", &Options{MaxStack: 3}, "stack holds more than 3"},
		{"memo limit", "Nq\x00q\x01q\x02.", &Options{MaxMemo: 2}, "memo holds more than 2"},
		{"STACK_GLOBAL not str", "K\x01K\x02\x93.", nil, "expected two strings"},
		{"READONLY_BUFFER on int", "K\x01\x98.", nil, "expected a buffer"},
		{"NEWOBJ on None", "N)\x81.", nil, "NEWOBJ on None"},
		{"NEWOBJ_EX kwargs", "N)N\x92.", nil, "expected a dict"},
		{"OBJ without class", "(o.", nil, "OBJ without a class"},
		{"ADDITEMS on list", "](\x90.", nil, "expected a set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			if o == nil {
				o = &Options{}
			}
			o.Name = "x"
			_, err := Unpickle([]byte(tc.data), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "pickle x at byte ")
			assert.NotContains(t, err.Error(), "internal error")
		})
	}
}

// Exponentially shared tuples as set items: hashing is budgeted.
func TestHashBudget(t *testing.T) {
	// t0 = (1,1); t(k+1) = (tk, tk) via the memo, 60 levels, then a set of it.
	data := []byte("\x8f(K\x01K\x01\x86")
	for i := 0; i < 60; i++ {
		data = append(data, 'q', 0, 'h', 0, 0x86)
	}
	data = append(data, 0x90, '.')
	_, err := Unpickle(data, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more work than the input size allows")
}

// TestMemoIndices: the memo keeps entries at any index, dense or sparse,
// and in any order.
func TestMemoIndices(t *testing.T) {
	var mm memo
	order := []int{100, 0, 1, 5, 1 << 30, 99, 101, 3, 166, 100}
	for k, i := range order {
		mm.set(i, int64(i*10+k))
	}
	assert.Equal(t, 9, mm.n)
	for _, i := range []int{0, 1, 3, 5, 99, 101, 166, 1 << 30} {
		v, ok := mm.get(i)
		assert.True(t, ok, "index %d", i)
		assert.EqualValues(t, i*10+indexOf(order, i), v, "index %d", i)
	}
	v, ok := mm.get(100)
	assert.True(t, ok)
	assert.EqualValues(t, 1009, v, "the last put wins")
	for _, i := range []int{-1, 2, 4, 98, 102, 165, 167, -1 + 1<<30} {
		_, ok := mm.get(i)
		assert.False(t, ok, "index %d", i)
	}
}

func indexOf(xs []int, x int) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func TestGetNegativeIndex(t *testing.T) {
	_, err := Unpickle([]byte("(lp0\ng-1\n."), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "memo index -1 was never stored")
}

// TestHugeIntKey: an int of millions of digits as a dict key is hashed
// in linear time (its decimal form took seconds) and equal ints still
// meet.
func TestHugeIntKey(t *testing.T) {
	n := 1 << 20
	long4 := append([]byte{opLONG4, 0, 0, 0x10, 0}, bytes.Repeat([]byte{0x5a}, n)...)
	p := []byte{opPROTO, 2, opEMPTY_DICT}
	p = append(p, long4...)
	p = append(p, opBININT1, 1, opSETITEM)
	p = append(p, long4...)
	p = append(p, opBININT1, 2, opSETITEM, opSTOP)
	v, err := Unpickle(p, nil)
	require.NoError(t, err)
	d := v.(*Dict)
	require.Equal(t, 1, d.Len(), "the same int twice is one key")
	assert.Equal(t, int64(2), d.Values[0])
	assert.Contains(t, Describe(d), "<int of 8388607 bits>: 2")
}

// TestMaxValues: values appended to a list leave the stack, so the stack
// bound does not stop them; MaxValues does.
func TestMaxValues(t *testing.T) {
	data := gen.AppendPickle(10_000)
	v, err := Unpickle(data, &Options{MaxStack: 2, MaxValues: 10_001})
	require.NoError(t, err)
	assert.Len(t, v.(*List).Items, 10_000)
	_, err = Unpickle(data, &Options{MaxValues: 10_000})
	assert.ErrorContains(t, err, "the pickle makes more than 10000 values")
}
