package gen

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/loaders/pickle"
)

// tupleDepth counts the levels of a chain of 1-tuples, without recursion.
func tupleDepth(v any) int {
	n := 0
	for {
		t, ok := v.(pickle.Tuple)
		if !ok || len(t) == 0 {
			return n
		}
		v, n = t[0], n+1
	}
}

func TestDeepTuplePickleIsDeep(t *testing.T) {
	for _, depth := range []int{0, 1, 1000, 1 << 20} {
		v, err := pickle.Unpickle(DeepTuplePickle(depth, "value"), nil)
		require.NoError(t, err)
		assert.Equal(t, depth, tupleDepth(v))
	}
	// The persistent id is the deep tuple itself.
	var pid any
	_, err := pickle.Unpickle(DeepTuplePickle(5000, "pid"), &pickle.Options{
		PersistentLoad: func(p any) (any, error) { pid = p; return nil, nil },
	})
	require.NoError(t, err)
	assert.Equal(t, 5000, tupleDepth(pid))
}

func TestDeepTuplePickleUses(t *testing.T) {
	// Every use makes a pickle the torch unpickler reads up to the deep
	// value and rejects (as the deep value is not what it expects there),
	// except "value" and "dict-key", which fail on the depth.
	for _, use := range DeepTupleUses {
		t.Run(use, func(t *testing.T) {
			data := DeepTupleArchive(2000, use, false)
			_, err := loaders.ParseTorchSave("deep.pt", data)
			require.Error(t, err)
		})
	}
	// With a flat value where the deep one goes, the pickle is the valid
	// torch.save file it imitates: the generator's framing is right.
	v, err := loaders.ParseTorchSave("t.pt", TorchZip(
		ZipEntry{Name: "data.pkl", Data: StoragePickle(1, 0, []int64{1}, []int64{1})},
		ZipEntry{Name: "data/0", Data: []byte{0, 0, 0x80, 0x3f}},
	))
	require.NoError(t, err)
	require.Equal(t, ivalue.KindTensor, v.Kind())
	assert.Equal(t, []float64{1}, v.Tensor().Float64s())
	assert.Panics(t, func() { DeepTuplePickle(1, "nowhere") })
}

func TestAppendPickle(t *testing.T) {
	data := AppendPickle(1000)
	assert.Equal(t, 2004, len(data))
	v, err := pickle.Unpickle(data, &pickle.Options{MaxStack: 2})
	require.NoError(t, err)
	assert.Len(t, v.(*pickle.List).Items, 1000)
}

func TestSharedTuplePickle(t *testing.T) {
	v, err := pickle.Unpickle(SharedTuplePickle(3), nil)
	require.NoError(t, err)
	e := pickle.Tuple{}
	l1 := pickle.Tuple{e, e}
	l2 := pickle.Tuple{l1, l1}
	assert.Equal(t, pickle.Tuple{l2, l2}, v)
	assert.Equal(t, 64, len(SharedTuplePickle(30)))
}

func TestMemoStackPickle(t *testing.T) {
	data := MemoStackPickle(1000)
	assert.Equal(t, 2004, len(data))
	_, err := pickle.Unpickle(data, nil)
	require.NoError(t, err)
	_, err = pickle.Unpickle(data, &pickle.Options{MaxMemo: 999})
	assert.ErrorContains(t, err, "memo holds more than 999 entries")
	_, err = pickle.Unpickle(data, &pickle.Options{MaxStack: 999})
	assert.ErrorContains(t, err, "stack holds more than 999 items")

	// 2^24 items: the 31 KB file of the campaign.
	assert.Less(t, len(MemoStackArchive(1<<24)), 40<<10)
}

func TestCodeBombArchive(t *testing.T) {
	const inflated = 3<<20 + 12345
	data := CodeBombArchive(inflated)
	assert.Less(t, len(data), inflated/500, "compressed about a thousandfold")
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var code *zip.File
	for _, f := range zr.File {
		if f.Name == "archive/code/__torch__.py" {
			code = f
		}
	}
	require.NotNil(t, code)
	rc, err := code.Open()
	require.NoError(t, err)
	got, err := io.ReadAll(rc) // checks the size and the CRC
	require.NoError(t, err)
	assert.Equal(t, len(minimalCode)+inflated, len(got))
	assert.Equal(t, minimalCode, string(got[:len(minimalCode)]))
	assert.Empty(t, bytes.Trim(got[len(minimalCode):], "\n"))

	// The module is valid: only the size is hostile.
	m, err := loaders.LoadBytesOptions("bomb.pt", data, &loaders.Options{MaxCompressionRatio: -1, MaxCodeSize: -1})
	require.NoError(t, err)
	assert.Equal(t, "__torch__.M", m.Class)
}

func TestScriptArchiveLoads(t *testing.T) {
	m, err := loaders.LoadBytes("m.pt", ScriptArchive())
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, m.InputNames)
}
