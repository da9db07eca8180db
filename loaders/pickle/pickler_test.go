package pickle

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// torchPython finds a Python with torch (the fixture script imports it):
// $GOSR_PYTHON, /usr/bin/python3, then python3 on PATH.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("GOSR_PYTHON"), "/usr/bin/python3", "python3"} {
		if c == "" {
			continue
		}
		if exec.Command(c, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(\"torch\") is None)").Run() == nil {
			return c
		}
	}
	t.Skip("no python with torch found (set GOSR_PYTHON)")
	return ""
}

func sampleValue() any {
	shared := &List{Items: []any{int64(1), "x"}}
	d := &Dict{}
	for _, kv := range [][2]any{
		{"none", nil}, {"t", true}, {"f", false},
		{"ints", &List{Items: []any{int64(0), int64(255), int64(256), int64(65535), int64(65536), int64(-1),
			int64(math.MaxInt32), int64(math.MinInt32), int64(math.MaxInt32) + 1, int64(math.MinInt64), int64(math.MaxInt64), int64(-129), int64(-128)}}},
		{"big", &List{Items: []any{new(big.Int).Lsh(big.NewInt(1), 64), new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 2000))}}},
		{"floats", &List{Items: []any{0.5, math.Copysign(0, -1), math.Inf(-1), math.NaN(), 1e300}}},
		{"str", "héllo 🎉"},
		{"bytes", []byte{0, 1, 0xff}},
		{"tuples", Tuple{Tuple{}, Tuple{int64(1)}, Tuple{int64(1), int64(2)}, Tuple{int64(1), int64(2), int64(3)}, Tuple{int64(1), int64(2), int64(3), int64(4)}}},
		{"a", shared}, {"b", shared},
		{int64(7), "int key"},
		{Tuple{int64(1), "k"}, "tuple key"},
		{"set", &Set{Items: []any{int64(3), "s"}}},
		{"frozen", &Set{Items: []any{int64(4)}, Frozen: true}},
		{"od", &Reduce{Global{"collections", "OrderedDict"}, Tuple{}}},
	} {
		if err := d.Set(kv[0], kv[1]); err != nil {
			panic(err)
		}
	}
	long := &List{}
	for i := 0; i < 2500; i++ {
		long.Items = append(long.Items, int64(i))
	}
	d.Set("long", long)
	return d
}

func TestPicklerRoundTrip(t *testing.T) {
	v := sampleValue()
	b, err := Marshal(v)
	require.NoError(t, err)
	got, err := Unpickle(b, &Options{Global: BuiltinGlobal})
	require.NoError(t, err)
	d := got.(*Dict)
	want := v.(*Dict)
	require.Equal(t, len(want.Keys), len(d.Keys))
	for i, k := range want.Keys {
		assert.Equal(t, k, d.Keys[i])
		switch k {
		case "floats":
			f := d.Values[i].(*List).Items
			assert.True(t, math.IsNaN(f[3].(float64)))
			assert.True(t, math.Signbit(f[1].(float64)))
		case "od":
			assert.Equal(t, &Dict{}, d.Values[i])
		case "set", "frozen":
			assert.Equal(t, want.Values[i].(*Set).Items, d.Values[i].(*Set).Items)
			assert.Equal(t, want.Values[i].(*Set).Frozen, d.Values[i].(*Set).Frozen)
		default:
			assert.Equal(t, want.Values[i], d.Values[i], "key %v", k)
		}
	}
	a, _ := d.Get("a")
	bb, _ := d.Get("b")
	assert.Same(t, a.(*List), bb.(*List))
}

// Python's pickle.load reads what the pickler writes.
func TestPicklerPython(t *testing.T) {
	py := torchPython(t)
	v := sampleValue()
	b, err := Marshal(v)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "go.pkl")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	out, err := exec.Command(py, filepath.Join("..", "..", "scripts", "make_pickle_testdata.py"), "describe-pickle", path).Output()
	require.NoError(t, err, "python: %s", out)
	var got []any
	require.NoError(t, json.Unmarshal(out, &got))
	// Python sees the same structure the Go unpickler does.
	back, err := Unpickle(b, &Options{Global: BuiltinGlobal})
	require.NoError(t, err)
	require.NoError(t, match("go.pkl", got[0], back))
}

func TestPicklerErrors(t *testing.T) {
	_, err := Marshal(struct{}{})
	assert.ErrorContains(t, err, "cannot pickle Go type struct {}")
	_, err = Marshal(&Dict{Keys: []any{"a"}})
	assert.ErrorContains(t, err, "1 keys and 0 values")
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	require.NoError(t, e.Encode(PersistentID{Tuple{"storage", Global{"torch", "FloatStorage"}, "0", "cpu", int64(4)}}))
	got, err := Unpickle(buf.Bytes(), &Options{
		Global:         func(m, n string) (any, error) { return m + "." + n, nil },
		PersistentLoad: func(pid any) (any, error) { return pid, nil },
	})
	require.NoError(t, err)
	assert.Equal(t, Tuple{"storage", "torch.FloatStorage", "0", "cpu", int64(4)}, got)
}
