package loaders

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// dtypes.safetensors is written by scripts/make_testdata.py with Python's
// struct/json/numpy, independently of this package's writer.
func TestReadPythonDTypes(t *testing.T) {
	tf, err := ReadSafetensors(filepath.Join("testdata", "dtypes.safetensors"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"source": "make_testdata.py", "note": "dtype sample"}, tf.Metadata)
	assert.Equal(t, []string{"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
		"uint8", "bool", "scalar", "empty", "odd_f16"}, tf.Names)

	ramp := []float64{-3, -2, -1, 0, 1, 2}
	tests := []struct {
		name  string
		dtype ivalue.DType
		sizes []int
		want  []float64
	}{
		{"float32", ivalue.Float32, []int{2, 3}, ramp},
		{"float64", ivalue.Float64, []int{2, 3}, ramp},
		{"float16", ivalue.Float16, []int{2, 3}, ramp},
		{"bfloat16", ivalue.BFloat16, []int{2, 3}, ramp},
		{"int64", ivalue.Int64, []int{2, 3}, ramp},
		{"int32", ivalue.Int32, []int{2, 3}, ramp},
		{"int16", ivalue.Int16, []int{2, 3}, ramp},
		{"int8", ivalue.Int8, []int{2, 3}, ramp},
		{"uint8", ivalue.Uint8, []int{2, 3}, []float64{0, 1, 2, 3, 4, 5}},
		{"bool", ivalue.Bool, []int{2, 3}, []float64{0, 1, 0, 1, 0, 1}},
		{"scalar", ivalue.Float32, []int{}, []float64{2.5}},
		{"empty", ivalue.Float32, []int{0, 3}, []float64{}},
		{"odd_f16", ivalue.Float16, []int{3}, []float64{float64(ivalue.HalfToFloat32(0x2e66)), 65504, float64(ivalue.HalfToFloat32(0x80a8))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := tf.Tensors[tc.name]
			require.NotNil(t, x)
			assert.Equal(t, tc.dtype, x.DType())
			assert.Equal(t, tc.sizes, append([]int{}, x.Sizes()...))
			assert.Equal(t, tc.want, x.Float64s())
		})
	}
}

func TestRoundTrip(t *testing.T) {
	nc := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	tr := &ivalue.Tensor{}
	tr.SetView(nc, 0, []int{3, 2}, []int{1, 3}) // a transposed view: written in logical order
	names := []string{"a", "b", "c", "t", "z"}
	tensors := []*ivalue.Tensor{
		ivalue.I64Tensor([]int64{-1, 1 << 40}),
		ivalue.BoolTensor([]bool{true, false, true}, 3), // 3 bytes: the next tensor is misaligned
		ivalue.F64Tensor([]float64{0.5, -2}, 2, 1),
		tr,
		ivalue.NewTensor(ivalue.Float32, 0),
	}
	path := filepath.Join(t.TempDir(), "x.safetensors")
	require.NoError(t, WriteSafetensors(path, names, tensors, map[string]string{"k": "v"}))
	tf, err := ReadSafetensors(path)
	require.NoError(t, err)
	assert.Equal(t, names, tf.Names)
	assert.Equal(t, map[string]string{"k": "v"}, tf.Metadata)
	for i, n := range names {
		got := tf.Tensors[n]
		assert.Equal(t, tensors[i].DType(), got.DType(), n)
		assert.Equal(t, tensors[i].Sizes(), got.Sizes(), n)
		assert.Equal(t, tensors[i].Float64s(), got.Float64s(), n)
	}
	assert.Equal(t, []int64{-1, 1 << 40}, tf.Tensors["a"].I64Contig())

	// Written tensors may be modified in place without touching the file (copy-on-write mapping).
	tf.Tensors["c"].F64()[0] = 42
	again, err := ReadSafetensors(path)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, -2}, again.Tensors["c"].Float64s())
}

func TestParseViewsData(t *testing.T) {
	data, err := EncodeSafetensors([]string{"x"}, []*ivalue.Tensor{ivalue.F32Tensor([]float32{1, 2})}, nil)
	require.NoError(t, err)
	buf := append(ivalue.AlignedBytes(len(data))[:0], data...)
	tf, err := ParseSafetensors(buf)
	require.NoError(t, err)
	tf.Tensors["x"].F32()[1] = 7 // a view: no copy was made
	tf2, err := ParseSafetensors(buf)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 7}, tf2.Tensors["x"].Float64s())
}

// file builds a safetensors image from a raw header and data.
func file(header string, data []byte) []byte {
	out := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	return append(append(out, header...), data...)
}

func TestCorrupt(t *testing.T) {
	d16 := make([]byte, 16)
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"short", []byte{1, 2, 3}, "truncated"},
		{"header past end", file(`{}`, nil)[:9], "beyond the file"},
		{"huge header length", append(huge, '{', '}'), "beyond the file"},
		{"bad json", file(`{"x":`, nil), "bad JSON"},
		{"not an object", file(`[1]`, nil), "expected a JSON object"},
		{"trailing", file(`{} x`, nil), "trailing"},
		{"entry not an object", file(`{"x":3}`, d16), `tensor "x"`},
		{"unknown field", file(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"y":1}}`, d16), `tensor "x"`},
		{"unknown dtype", file(`{"x":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}}`, d16), `tensor "x": unknown dtype "C64"`},
		{"missing shape", file(`{"x":{"dtype":"F32","data_offsets":[0,16]}}`, d16), `tensor "x": missing shape`},
		{"bad offsets", file(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0]}}`, d16), `tensor "x": expected data_offsets`},
		{"offset past end", file(`{"x":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}`, d16), `tensor "x": data_offsets [0, 32] out of range`},
		{"reversed offsets", file(`{"x":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}}`, d16), `out of range`},
		{"negative size", file(`{"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}`, d16), `negative size`},
		{"size mismatch", file(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}`, d16), `tensor "x": shape [3] of F32 needs 12 bytes`},
		{"overflowing shape", file(`{"x":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,16]}}`, d16), `larger than the file`},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, d16), `tensor "b": data_offsets [8, 16] overlap tensor "a"`},
		{"duplicate", file(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, d16), `duplicate tensor "a"`},
		{"bad metadata", file(`{"__metadata__":{"a":1}}`, nil), `__metadata__`},
		{"bad bool", file(`{"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}`, []byte{1, 7}), `tensor "b": bool element 1 is 7`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSafetensors(tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.safetensors")
	require.NoError(t, os.WriteFile(bad, file(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}`, make([]byte, 16)), 0o644))
	for _, p := range []string{bad, filepath.Join(dir, "missing.safetensors"), filepath.Join(dir, "empty.safetensors")} {
		if filepath.Base(p) == "empty.safetensors" {
			require.NoError(t, os.WriteFile(p, nil, 0o644))
		}
		_, err := ReadSafetensors(p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), p)
	}
}

func TestWriteErrors(t *testing.T) {
	x := ivalue.F32Tensor([]float32{1})
	_, err := EncodeSafetensors([]string{"a", "a"}, []*ivalue.Tensor{x, x}, nil)
	assert.ErrorContains(t, err, `"a"`)
	_, err = EncodeSafetensors([]string{"a"}, nil, nil)
	assert.Error(t, err)
	_, err = EncodeSafetensors([]string{"a"}, []*ivalue.Tensor{nil}, nil)
	assert.Error(t, err)
}

func FuzzParseSafetensors(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "dtypes.safetensors"))
	f.Add(seed)
	f.Add(file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(file(`{"__metadata__":{"k":"v"}}`, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := ParseSafetensors(data)
		if err != nil {
			return
		}
		for _, n := range tf.Names {
			x := tf.Tensors[n]
			if x.Nbytes() > len(data) {
				t.Fatalf("tensor %q claims %d bytes of a %d-byte file", n, x.Nbytes(), len(data))
			}
			_ = x.Float64s()
		}
	})
}
