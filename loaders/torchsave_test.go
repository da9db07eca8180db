package loaders

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// matchIV compares got with the tagged JSON scripts/make_pickle_testdata.py
// writes. Tensors with the same "storage" id must share one *Storage, and
// tensors with different ids must not.
func matchIV(path string, want any, got ivalue.IValue, storages map[float64]*ivalue.Storage) error {
	w := want.([]any)
	tag := w[0].(string)
	mismatch := func() error { return fmt.Errorf("%s: got %s %v, want %v", path, got.Kind(), got, want) }
	switch tag {
	case "none":
		if !got.IsNone() {
			return mismatch()
		}
	case "bool":
		if got.Kind() != ivalue.KindBool || got.Bool() != w[1].(bool) {
			return mismatch()
		}
	case "int":
		if got.Kind() != ivalue.KindInt || strconv.FormatInt(got.Int(), 10) != w[1].(string) {
			return mismatch()
		}
	case "float":
		f, _ := strconv.ParseFloat(w[1].(string), 64)
		if got.Kind() != ivalue.KindDouble || got.Double() != f {
			return mismatch()
		}
	case "str":
		if got.Kind() != ivalue.KindString || got.Str() != w[1].(string) {
			return mismatch()
		}
	case "tensor":
		if !got.IsTensor() {
			return mismatch()
		}
		t := got.Tensor()
		d := w[1].(map[string]any)
		dt, err := ivalue.DTypeFromTorchName(d["dtype"].(string))
		if err != nil {
			return err
		}
		ints := func(v any) []int {
			out := []int{}
			for _, x := range v.([]any) {
				out = append(out, int(x.(float64)))
			}
			return out
		}
		if t.DType() != dt || fmt.Sprint(t.Sizes()) != fmt.Sprint(ints(d["sizes"])) ||
			fmt.Sprint(t.Strides()) != fmt.Sprint(ints(d["strides"])) || t.Offset() != int(d["offset"].(float64)) {
			return fmt.Errorf("%s: got %s sizes %v strides %v offset %d, want %v", path, t.DType(), t.Sizes(), t.Strides(), t.Offset(), d)
		}
		if n := int(d["storage_numel"].(float64)); len(t.Storage().Data) != n*dt.Size() {
			return fmt.Errorf("%s: storage of %d bytes, want %d elements", path, len(t.Storage().Data), n)
		}
		vals := t.Float64s()
		wv := d["values"].([]any)
		if len(vals) != len(wv) {
			return fmt.Errorf("%s: %d values, want %d", path, len(vals), len(wv))
		}
		for i, x := range wv {
			var f float64
			switch x := x.(type) {
			case float64:
				f = x
			case string:
				f, _ = strconv.ParseFloat(x, 64)
			}
			if !(math.IsNaN(f) && math.IsNaN(vals[i])) && f != vals[i] {
				return fmt.Errorf("%s: value %d is %v, want %v", path, i, vals[i], f)
			}
		}
		id := d["storage"].(float64)
		if s, ok := storages[id]; ok && s != t.Storage() {
			return fmt.Errorf("%s: should share storage %v with an earlier tensor", path, id)
		}
		for oid, s := range storages {
			if oid != id && s == t.Storage() {
				return fmt.Errorf("%s: shares a storage it should not", path)
			}
		}
		storages[id] = t.Storage()
	case "list", "tuple":
		if (tag == "list") != (got.Kind() == ivalue.KindList) || (tag == "tuple") != (got.Kind() == ivalue.KindTuple) {
			return mismatch()
		}
		ws := w[1].([]any)
		if len(ws) != len(got.List().Items) {
			return mismatch()
		}
		for i := range ws {
			if err := matchIV(fmt.Sprintf("%s[%d]", path, i), ws[i], got.List().Items[i], storages); err != nil {
				return err
			}
		}
	case "dict":
		if got.Kind() != ivalue.KindDict {
			return mismatch()
		}
		ws := w[1].([]any)
		d := got.Dict()
		if len(ws) != len(d.Keys) {
			return mismatch()
		}
		for i, kv := range ws {
			kv := kv.([]any)
			if err := matchIV(path+".key", kv[0], d.Keys[i], storages); err != nil {
				return err
			}
			if err := matchIV(fmt.Sprintf("%s[%v]", path, d.Keys[i]), kv[1], d.Values[i], storages); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: unexpected tag %q", path, tag)
	}
	return nil
}

func loadExpected(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

var torchSaveFiles = []string{"dtypes", "nest", "views", "views_only", "scalar", "empty", "state_dict", "param"}

// Files torch.save wrote, read back and compared with what torch.load gave.
func TestReadTorchSave(t *testing.T) {
	exp := loadExpected(t, filepath.Join("testdata", "torchsave", "expected.json"))
	for _, name := range torchSaveFiles {
		t.Run(name, func(t *testing.T) {
			v, err := ReadTorchSave(filepath.Join("testdata", "torchsave", name+".pt"))
			require.NoError(t, err)
			require.NoError(t, matchIV(name, exp[name], v, map[float64]*ivalue.Storage{}))
		})
	}
	t.Run("views share storage", func(t *testing.T) {
		v, err := ReadTorchSave(filepath.Join("testdata", "torchsave", "views.pt"))
		require.NoError(t, err)
		it := v.List().Items
		assert.True(t, it[0].Tensor().SharesStorage(it[1].Tensor()))
		assert.True(t, it[0].Tensor().SharesStorage(it[2].Tensor()))
		assert.False(t, it[0].Tensor().IsContiguous())
		assert.Equal(t, 5, it[1].Tensor().Offset())
	})
	t.Run("storage is not copied", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("testdata", "torchsave", "scalar.pt"))
		require.NoError(t, err)
		v, err := ParseTorchSave("scalar.pt", data)
		require.NoError(t, err)
		p := &v.Tensor().Storage().Data[0]
		inside := false
		for i := range data {
			inside = inside || &data[i] == p
		}
		assert.True(t, inside, "the tensor views the file's bytes")
	})
}

func TestLegacyTorchSave(t *testing.T) {
	_, err := ReadTorchSave(filepath.Join("testdata", "torchsave", "legacy.pt"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "legacy torch.save format")
	assert.Contains(t, err.Error(), "legacy.pt")
}

// torchPython finds a Python with torch: $GOSR_PYTHON, /usr/bin/python3,
// then python3 on PATH.
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

// What gosr writes, torch.load reads: values, geometry and sharing.
func TestWriteTorchSave(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	var paths []string
	var values []ivalue.IValue
	add := func(v ivalue.IValue) {
		p := filepath.Join(dir, fmt.Sprintf("w%d.pt", len(paths)))
		require.NoError(t, WriteTorchSave(p, v))
		paths = append(paths, p)
		values = append(values, v)
	}
	// Everything torch.save wrote, round-tripped through gosr.
	for _, name := range torchSaveFiles {
		v, err := ReadTorchSave(filepath.Join("testdata", "torchsave", name+".pt"))
		require.NoError(t, err)
		add(v)
	}
	// Made in Go: a transposed view and an offset view of one storage,
	// every dtype, nested containers.
	base := ivalue.F32Tensor([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 4)
	tr, off := &ivalue.Tensor{}, &ivalue.Tensor{}
	tr.SetView(base, 0, []int{4, 3}, []int{1, 4})
	off.SetView(base, 5, []int{2, 3}, []int{4, 1})
	shared := ivalue.NewList(ivalue.FromInt(1))
	d := &ivalue.Dict{}
	d.Set(ivalue.FromString("t"), ivalue.FromTensor(tr))
	d.Set(ivalue.FromString("off"), ivalue.FromTensor(off))
	d.Set(ivalue.FromString("i64"), ivalue.FromTensor(ivalue.I64Tensor([]int64{-1, 1 << 40})))
	d.Set(ivalue.FromString("bool"), ivalue.FromTensor(ivalue.BoolTensor([]bool{true, false})))
	d.Set(ivalue.FromString("scalar"), ivalue.FromTensor(ivalue.ScalarTensor(2.5)))
	d.Set(ivalue.FromString("empty"), ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 0, 3)))
	d.Set(ivalue.FromInt(7), ivalue.NewTuple(ivalue.FromDouble(math.Inf(1)), ivalue.None(), ivalue.FromBool(true), shared, shared))
	d.Set(ivalue.FromString("big"), ivalue.FromInt(math.MinInt64))
	add(ivalue.DictOf(d))

	out, err := exec.Command(py, append([]string{filepath.Join("..", "scripts", "make_pickle_testdata.py"), "describe"}, paths...)...).CombinedOutput()
	require.NoError(t, err, "torch.load: %s", out)
	var got []any
	require.NoError(t, json.Unmarshal(out, &got))
	for i, v := range values {
		require.NoError(t, matchIV(filepath.Base(paths[i]), got[i], v, map[float64]*ivalue.Storage{}))
	}
}

func TestWriteTorchSaveLayout(t *testing.T) {
	base := ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	v := ivalue.NewTuple(ivalue.FromTensor(base), ivalue.FromTensor(ivalue.I32Tensor([]int32{5})), ivalue.FromTensor(base))
	path := filepath.Join(t.TempDir(), "x.pt")
	require.NoError(t, WriteTorchSave(path, v))
	a, err := OpenArchive(path)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, "archive/", a.Prefix())
	assert.Equal(t, []string{"data.pkl", "data/0", "data/1", "version"}, a.Records())
	require.NoError(t, a.Verify())
	for _, r := range a.Records() {
		off, err := a.files[r].DataOffset()
		require.NoError(t, err)
		assert.Zero(t, off%64, "record %s at %d", r, off)
	}
	ver, err := a.Record("version")
	require.NoError(t, err)
	assert.Equal(t, "3\n", string(ver))

	back, err := ReadTorchSave(path)
	require.NoError(t, err)
	it := back.List().Items
	assert.True(t, it[0].Tensor().SharesStorage(it[2].Tensor()))
	assert.Equal(t, []float64{1, 2, 3, 4}, it[0].Tensor().Float64s())
	assert.Equal(t, []float64{5}, it[1].Tensor().Float64s())
}

func TestWriteTorchSaveErrors(t *testing.T) {
	s := ivalue.NewStorage(8)
	f, err := ivalue.FromStorage(ivalue.Float32, s, 0, []int{2}, nil)
	require.NoError(t, err)
	i, err := ivalue.FromStorage(ivalue.Int32, s, 0, []int{2}, nil)
	require.NoError(t, err)
	err = EncodeTorchSave(discard{}, ivalue.NewList(ivalue.FromTensor(f), ivalue.FromTensor(i)))
	assert.ErrorContains(t, err, "one storage viewed as float32 and as int32")
	err = EncodeTorchSave(discard{}, ivalue.Object(struct{}{}))
	assert.ErrorContains(t, err, "cannot save a value of kind Object")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzReadTorchSave: no input makes the reader panic. Seeds are the
// torch.save fixtures.
func FuzzReadTorchSave(f *testing.F) {
	for _, name := range torchSaveFiles {
		if b, err := os.ReadFile(filepath.Join("testdata", "torchsave", name+".pt")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseTorchSave("fuzz.pt", data)
		if err == nil {
			_ = v.String()
		}
	})
}
