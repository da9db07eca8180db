package loaders

import (
	"archive/zip"
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/pickle"
)

func TestUnpickleTorchScriptModule(t *testing.T) {
	exp := loadExpected(t, filepath.Join("testdata", "pickle", "expected.json"))["attrs"].(map[string]any)
	a, err := OpenArchive(filepath.Join("testdata", "pickle", "attrs.pt"))
	require.NoError(t, err)
	defer a.Close()
	root, err := UnpickleTorch(a, "data.pkl", "data")
	require.NoError(t, err)
	obj, ok := root.Ref().(*ScriptObject)
	require.True(t, ok, "root is %v", root)
	assert.Regexp(t, `^__torch__\.(___torch_mangle_\d+\.)?Attrs$`, obj.Class)
	assert.Equal(t, []string{"buf", "training", "_is_full_backward_hook", "names", "scale", "count", "table", "pair", "flag", "lin"}, obj.Names, "the pickled order")
	assert.Nil(t, obj.State)

	lin := obj.Attrs["lin"].Ref().(*ScriptObject)
	assert.Contains(t, lin.Class, "__torch__.torch.nn.modules.linear.")
	st := map[float64]*ivalue.Storage{}
	require.NoError(t, matchIV("lin.weight", exp["lin.weight"], lin.Attrs["weight"], st))
	require.NoError(t, matchIV("lin.bias", exp["lin.bias"], lin.Attrs["bias"], map[float64]*ivalue.Storage{}))
	require.NoError(t, matchIV("buf", exp["buf"], obj.Attrs["buf"], map[float64]*ivalue.Storage{}))

	assert.Equal(t, `["a", "b"]`, obj.Attrs["names"].String())
	assert.Equal(t, 0.5, obj.Attrs["scale"].Double())
	assert.Equal(t, int64(3), obj.Attrs["count"].Int())
	assert.Equal(t, `{"x": 1, "y": 2}`, obj.Attrs["table"].String())
	assert.Equal(t, `(1, "one")`, obj.Attrs["pair"].String())
	assert.True(t, obj.Attrs["flag"].Bool())
	assert.False(t, obj.Attrs["training"].Bool())
	assert.True(t, obj.Attrs["_is_full_backward_hook"].IsNone())

	for _, name := range []string{"weight", "bias"} {
		x := lin.Attrs[name].Tensor()
		p := uintptr(unsafe.Pointer(&x.Storage().Data[0]))
		assert.Zero(t, p%64, "%s: PyTorch aligns records to 64 bytes; gosr views them in place", name)
	}
}

func TestUnpickleTorchFrozenConstants(t *testing.T) {
	a, err := OpenArchive(filepath.Join("testdata", "pickle", "frozen.pt"))
	require.NoError(t, err)
	defer a.Close()
	c, err := UnpickleTorch(a, "constants.pkl", "constants")
	require.NoError(t, err)
	require.Equal(t, ivalue.KindTuple, c.Kind())
	n := 0
	for _, it := range c.List().Items {
		if it.IsTensor() {
			n++
		}
	}
	assert.Positive(t, n, "freezing folds the weights into constants: %v", c)
	root, err := UnpickleTorch(a, "data.pkl", "data")
	require.NoError(t, err)
	assert.Regexp(t, `^__torch__\.(___torch_mangle_\d+\.)?Attrs$`, root.Ref().(*ScriptObject).Class)
}

// archiveOf builds an archive (not aligned: Go's zip writer does not pad)
// with the given records under "t/".
func archiveOf(t *testing.T, recs map[string][]byte, order ...string) *Archive {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range order {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "t/" + name, Method: zip.Store})
		require.NoError(t, err)
		w.Write(recs[name])
	}
	require.NoError(t, zw.Close())
	a, err := ParseArchive("t.pt", buf.Bytes())
	require.NoError(t, err)
	return a
}

func tensorPickle(t *testing.T, storageType string, numel int64, off int64, sizes, strides pickle.Tuple, count int) []byte {
	t.Helper()
	pid := pickle.PersistentID{ID: pickle.Tuple{"storage", pickle.Global{Module: "torch", Name: storageType}, "0", "cpu", numel}}
	var items []any
	for i := 0; i < count; i++ {
		items = append(items, &pickle.Reduce{Callable: pickle.Global{Module: "torch._utils", Name: "_rebuild_tensor_v2"},
			Args: pickle.Tuple{pid, off, sizes, strides, false, &pickle.Reduce{Callable: pickle.Global{Module: "collections", Name: "OrderedDict"}, Args: pickle.Tuple{}}}})
	}
	b, err := pickle.Marshal(&pickle.List{Items: items})
	require.NoError(t, err)
	return b
}

func TestUnpickleTorchStorages(t *testing.T) {
	// A 1-byte record first makes data/0 land at an odd offset.
	f64 := make([]byte, 32)
	for i := range 4 {
		*(*float64)(unsafe.Pointer(&f64[8*i])) = float64(i) + 0.5
	}
	t.Run("misaligned record is copied", func(t *testing.T) {
		a := archiveOf(t, map[string][]byte{"pad": {1}, "data.pkl": tensorPickle(t, "DoubleStorage", 4, 0, pickle.Tuple{int64(2), int64(2)}, pickle.Tuple{int64(2), int64(1)}, 2), "data/0": f64}, "pad", "data.pkl", "data/0")
		rec, _ := a.Record("data/0")
		require.NotZero(t, uintptr(unsafe.Pointer(&rec[0]))%8, "the test needs a misaligned record")
		v, err := UnpickleTorch(a, "data.pkl", "data")
		require.NoError(t, err)
		x, y := v.List().Items[0].Tensor(), v.List().Items[1].Tensor()
		assert.Equal(t, []float64{0.5, 1.5, 2.5, 3.5}, x.Float64s())
		assert.Zero(t, uintptr(unsafe.Pointer(&x.Storage().Data[0]))%8)
		assert.True(t, x.SharesStorage(y), "one key, one storage")
	})
	tests := []struct {
		name   string
		pkl    []byte
		data   []byte
		substr string
	}{
		{"record too small", tensorPickle(t, "DoubleStorage", 5, 0, pickle.Tuple{int64(5)}, pickle.Tuple{int64(1)}, 1), f64,
			`archive t.pt: entry "data/0": 32 bytes, but storage "0" needs 5 float64 elements`},
		{"view beyond storage", tensorPickle(t, "DoubleStorage", 4, 1, pickle.Tuple{int64(2), int64(2)}, pickle.Tuple{int64(2), int64(1)}, 1), f64,
			"reach beyond storage"},
		{"huge strides", tensorPickle(t, "DoubleStorage", 4, 0, pickle.Tuple{int64(3), int64(2)}, pickle.Tuple{int64(1) << 40, int64(1)}, 1), f64,
			"reach beyond storage"},
		{"negative size", tensorPickle(t, "DoubleStorage", 4, 0, pickle.Tuple{int64(-1)}, pickle.Tuple{int64(1)}, 1), f64,
			"size[0] is -1"},
		{"unknown storage", tensorPickle(t, "QInt8Storage", 4, 0, pickle.Tuple{int64(4)}, pickle.Tuple{int64(1)}, 1), f64,
			"global torch.QInt8Storage is not supported (supported: "},
		{"missing record", tensorPickle(t, "FloatStorage", 4, 0, pickle.Tuple{int64(4)}, pickle.Tuple{int64(1)}, 1), nil,
			`archive t.pt: entry "data/0": missing`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := map[string][]byte{"data.pkl": tc.pkl}
			order := []string{"data.pkl"}
			if tc.data != nil {
				recs["data/0"] = tc.data
				order = append(order, "data/0")
			}
			_, err := UnpickleTorch(archiveOf(t, recs, order...), "data.pkl", "data")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.substr)
			assert.Contains(t, err.Error(), "t.pt")
		})
	}
}

func TestUnpickleTorchMalicious(t *testing.T) {
	for _, file := range []string{"malicious_os_system_reduce.pkl", "malicious_builtins_eval.pkl", "malicious_subprocess_stack_global.pkl", "malicious_inst_os_system.pkl"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("pickle", "testdata", file))
			require.NoError(t, err)
			_, err = UnpickleTorch(archiveOf(t, map[string][]byte{"data.pkl": b}, "data.pkl"), "data.pkl", "data")
			require.Error(t, err)
			assert.Regexp(t, `^archive t\.pt: pickle data\.pkl at byte \d+: global \S+ is not supported \(supported: .*torch\._utils\._rebuild_tensor_v2`, err.Error())
		})
	}
}

func TestUnpickleTorchValues(t *testing.T) {
	g := func(m, n string) pickle.Global { return pickle.Global{Module: m, Name: n} }
	tests := []struct {
		name string
		v    any
		want string
		err  string
	}{
		{"device", &pickle.Reduce{Callable: g("torch", "device"), Args: pickle.Tuple{"cuda", int64(1)}}, "device(cuda:1)", ""},
		{"size", &pickle.Reduce{Callable: g("torch", "Size"), Args: pickle.Tuple{pickle.Tuple{int64(2), int64(3)}}}, "(2, 3)", ""},
		{"dtype", g("torch", "float16"), "5", ""},
		{"intlist", &pickle.Reduce{Callable: g("torch.jit._pickle", "build_intlist"), Args: pickle.Tuple{&pickle.List{Items: []any{int64(1)}}}}, "[1]", ""},
		{"bytes", []byte("ab"), `"ab"`, ""},
		{"ordered", &pickle.Reduce{Callable: g("collections", "OrderedDict"), Args: pickle.Tuple{}}, "{}", ""},
		{"big int", new(bigInt).Lsh(bigOne(), 70), "", "does not fit in 64 bits"},
		{"set", &pickle.Set{Items: []any{int64(1)}}, "", "sets are not supported"},
		{"global as value", g("torch", "FloatStorage"), "", "torch.FloatStorage cannot be a value"},
		{"dict key", func() any { d := &pickle.Dict{}; d.Set(nil, int64(1)); return d }(), "", "dict key of type None"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := pickle.Marshal(tc.v)
			require.NoError(t, err)
			v, err := UnpickleTorch(archiveOf(t, map[string][]byte{"data.pkl": b}, "data.pkl"), "data.pkl", "data")
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.String())
		})
	}
	t.Run("cycle", func(t *testing.T) {
		// l = []; l.append(l)
		_, err := UnpickleTorch(archiveOf(t, map[string][]byte{"data.pkl": []byte("\x80\x02]q\x00h\x00a.")}, "data.pkl"), "data.pkl", "data")
		assert.ErrorContains(t, err, "a list contains itself")
	})
}

type bigInt = big.Int

func bigOne() *big.Int { return big.NewInt(1) }
