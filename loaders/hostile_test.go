package loaders_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/hostile/gen"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/loaders"
)

// measure runs f and returns the bytes it allocated (runtime.MemStats'
// TotalAlloc: every allocation counted, so the peak heap f caused is at
// most this) and how long it took.
func measure(f func()) (alloc uint64, took time.Duration) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, took
}

// TestDeepTupleIsAnError: a tuple nested a million deep (a 1 MB pickle,
// 1 KB deflated) as a persistent id, a tensor size, a bytearray's
// argument...: formatting it for the error once overflowed the stack, a
// fatal error no recover catches. Each is now an error naming the archive
// and the pickle, and a short one.
func TestDeepTupleIsAnError(t *testing.T) {
	const depth = 1_000_000 // fmt's %v overflows the 1 GB stack from about 600,000
	for _, use := range gen.DeepTupleUses {
		t.Run(use, func(t *testing.T) {
			data := gen.DeepTupleArchive(depth, use, true)
			assert.Less(t, len(data), 4<<10)
			_, err := loaders.LoadBytes("deep.pt", data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "archive deep.pt: pickle data.pkl")
			assert.Less(t, len(err.Error()), 600, err.Error())
		})
	}
}

// TestDeepTupleMessages: what the errors say where the deep value was.
func TestDeepTupleMessages(t *testing.T) {
	cases := []struct{ use, want string }{
		{"pid", "persistent id (((((...),),),),): expected ('storage', storage type, key, location, numel)"},
		{"pid-kind", "persistent id of kind (((((...),),),),) is not supported"},
		{"pid-numel", `persistent id for storage "0": numel is (((((...),),),),), expected a non-negative int`},
		{"size", "_rebuild_tensor_v2: size[0] is (((((...),),),),), expected a non-negative int"},
		{"stride", "_rebuild_tensor_v2: stride[0] is (((((...),),),),), expected a non-negative int"},
		{"offset", "_rebuild_tensor_v2: storage offset (((((...),),),),) outside storage"},
		{"bytearray", "bytearray: item 0 is (((((...),),),),), expected an int in 0..255"},
		{"dict-key", "tuple key nested more than 64 deep"},
		{"value", "values nested more than 1000 deep"},
	}
	for _, tc := range cases {
		_, err := loaders.ParseTorchSave("deep.pt", gen.TorchZip(
			gen.ZipEntry{Name: "data.pkl", Data: gen.DeepTuplePickle(5000, tc.use)},
			gen.ZipEntry{Name: "data/0", Data: make([]byte, 4)},
		))
		require.Error(t, err, tc.use)
		assert.Contains(t, err.Error(), tc.want, tc.use)
	}
}

// TestOverflowingSizes: a stored tensor whose sizes multiply beyond 2^63
// (PyTorch: "numel: integer multiplication overflow") once loaded as an
// empty tensor; sizes reaching beyond the storage, however the strides
// and the offset get there, and storages larger than their records are
// errors too, naming the archive and the pickle.
func TestOverflowingSizes(t *testing.T) {
	cases := []struct {
		name           string
		numel, offset  int64
		sizes, strides []int64
		record         int
		want           string
	}{
		{"numel overflow", 64, 0, []int64{1 << 32, 1 << 32, 64}, []int64{0, 0, 1}, 256, "numel: integer multiplication overflow"},
		{"numel overflow, contiguous strides", 64, 0, []int64{1 << 32, 1 << 32, 64}, []int64{1 << 38, 64, 1}, 256, "numel: integer multiplication overflow"},
		{"stride 0 past the end", 64, 10, []int64{1000, 64}, []int64{0, 1}, 256, "reach beyond storage"},
		{"stride overflow", 64, 0, []int64{1 << 40, 1}, []int64{1 << 40, 1}, 256, "the storage size calculation overflows"},
		{"offset past the end", 64, 65, []int64{1}, []int64{1}, 256, "storage offset 65 outside storage"},
		{"negative size", 64, 0, []int64{-1, 4}, []int64{4, 1}, 256, "size[0] is -1, expected a non-negative int"},
		{"storage larger than its record", 1e12, 0, []int64{1}, []int64{1}, 256, `entry "data/0": 256 bytes, but storage "0" needs 1000000000000 float32 elements`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := gen.TorchZip(
				gen.ZipEntry{Name: "data.pkl", Data: gen.StoragePickle(tc.numel, tc.offset, tc.sizes, tc.strides)},
				gen.ZipEntry{Name: "data/0", Data: make([]byte, tc.record)},
			)
			var err error
			alloc, _ := measure(func() { _, err = loaders.ParseTorchSave("sizes.pt", data) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), "archive sizes.pt")
			assert.Contains(t, err.Error(), "data.pkl")
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, alloc, uint64(1<<20), "what the file claims is not allocated")
		})
	}
	// The same tensor as a constant of a TorchScript archive.
	_, err := loaders.LoadBytes("m.pt", gen.ScriptArchive(
		gen.ZipEntry{Name: "constants.pkl", Data: gen.StoragePickle(64, 0, []int64{1 << 32, 1 << 32, 64}, []int64{0, 0, 1})},
		gen.ZipEntry{Name: "constants/0", Data: make([]byte, 256)},
	))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "archive m.pt: pickle constants.pkl")
	assert.Contains(t, err.Error(), "numel: integer multiplication overflow")

	// The same geometry within bounds loads: a broadcast view of 64 stored
	// elements, 64,000 elements long.
	v, err := loaders.ParseTorchSave("ok.pt", gen.TorchZip(
		gen.ZipEntry{Name: "data.pkl", Data: gen.StoragePickle(64, 0, []int64{1000, 64}, []int64{0, 1})},
		gen.ZipEntry{Name: "data/0", Data: make([]byte, 256)},
	))
	require.NoError(t, err)
	assert.Equal(t, 64000, v.Tensor().Numel())
}

// TestCodeBomb: a 1.1 MB archive whose code entry inflates to 1 GiB once
// loaded (2.6 GB, 11 s). Now it is refused from the entry's header,
// before anything is inflated, by whichever limit comes first.
func TestCodeBomb(t *testing.T) {
	bomb := gen.CodeBombArchive(1 << 30)
	assert.Less(t, len(bomb), 1200<<10)
	cases := []struct {
		name string
		o    *loaders.Options
		want string
	}{
		{"defaults", nil, "exceed the code limit of 4194304 bytes (Options.MaxCodeSize)"},
		{"ratio", &loaders.Options{MaxCodeSize: -1}, "a ratio over the limit of 200:1 (Options.MaxCompressionRatio)"},
		{"entry size", &loaders.Options{MaxCompressionRatio: -1, MaxCodeSize: -1}, "more than the entry limit of 67108864 (Options.MaxEntrySize)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc, took := measure(func() { _, err = loaders.LoadBytesOptions("bomb.pt", bomb, tc.o) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), `archive bomb.pt: entry "code/__torch__.py"`)
			assert.Contains(t, err.Error(), tc.want)
			t.Logf("%s: %d bytes allocated, %v", tc.name, alloc, took)
			assert.Less(t, alloc, uint64(1<<20))
			assert.Less(t, took, 5*time.Second)
		})
	}
}

// TestVersionBomb: the version record is only reported, but one that
// cannot be read (here, 1 GiB of deflated zeros) fails the load rather
// than being skipped.
func TestVersionBomb(t *testing.T) {
	data := gen.TorchZip(
		gen.ZipEntry{Name: "data.pkl", Data: gen.DeepTuplePickle(0, "value")},
		gen.ZipEntry{Name: "code/__torch__.py", Data: []byte("class M(Module):\n")},
		gen.ZipEntry{Name: "version", Data: make([]byte, 16<<20), Deflate: true},
	)
	_, err := loaders.LoadBytes("v.pt", data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `archive v.pt: entry "version"`)
	assert.Contains(t, err.Error(), "MaxCompressionRatio")
}

// TestEntryLargerThanDeclared: a header that declares less than the
// stream inflates to is an error after the declared size, however much
// more the stream holds.
func TestEntryLargerThanDeclared(t *testing.T) {
	bomb := gen.CodeBombArchive(64 << 20)
	buf := declareCodeSize(t, bomb, 2<<20) // the stream holds 64 MiB
	var err error

	alloc, _ := measure(func() {
		_, err = loaders.LoadBytesOptions("liar.pt", buf.Bytes(), &loaders.Options{MaxCompressionRatio: -1, MaxCodeSize: -1})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `archive liar.pt: entry "code/__torch__.py"`)
	assert.Less(t, alloc, uint64(8<<20), "at most the declared 2 MiB and the reader's buffers")
}

// TestImpossibleDeclaredSize: with every limit off, a header declaring
// more than deflate can produce from the entry's bytes is still refused
// before it sizes an allocation.
func TestImpossibleDeclaredSize(t *testing.T) {
	data := gen.ScriptArchive()
	buf := declareCodeSize(t, data, 1<<40)
	var err error
	none := &loaders.Options{MaxEntrySize: -1, MaxCompressionRatio: -1, MaxPickleItems: -1, MaxCodeSize: -1, MaxGraphNodes: -1}
	alloc, _ := measure(func() { _, err = loaders.LoadBytesOptions("liar.pt", buf.Bytes(), none) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot inflate to the 1099511627776 its header declares")
	assert.Less(t, alloc, uint64(1<<20))
}

// TestMemoStackBomb: a 31 KB archive whose pickle (32 MB deflated) fills
// the unpickler's memo and stack with 2^24 items each once took 1.48 GB.
func TestMemoStackBomb(t *testing.T) {
	bomb := gen.MemoStackArchive(1 << 24)
	assert.Less(t, len(bomb), 40<<10)
	_, err := loaders.ParseTorchSave("memo.pt", bomb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaxCompressionRatio")

	alloc, took := measure(func() {
		_, err = loaders.ParseTorchSaveOptions("memo.pt", bomb, &loaders.Options{MaxCompressionRatio: -1})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "archive memo.pt: pickle data.pkl")
	assert.Contains(t, err.Error(), "holds more than 1048576")
	assert.Contains(t, err.Error(), "Options.MaxPickleItems")
	t.Logf("%d bytes allocated, %v", alloc, took)
	// The 32 MB pickle itself, then 2^20 items on the stack and in the
	// memo, 16 bytes each, in slices that double.
	assert.Less(t, alloc, uint64(128<<20))

	_, err = loaders.ParseTorchSaveOptions("memo.pt", bomb, &loaders.Options{MaxCompressionRatio: -1, MaxPickleItems: 1000})
	assert.ErrorContains(t, err, "holds more than 1000")
}

// TestAppendBomb: a list appended to 16M times from a 32 MB pickle (a
// 31 KB deflated entry): the stack stays small, the list does not.
func TestAppendBomb(t *testing.T) {
	bomb := gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: gen.AppendPickle(1 << 24), Deflate: true})
	assert.Less(t, len(bomb), 40<<10)
	var err error
	alloc, took := measure(func() {
		_, err = loaders.ParseTorchSaveOptions("list.pt", bomb, &loaders.Options{MaxCompressionRatio: -1})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "archive list.pt: pickle data.pkl")
	assert.Contains(t, err.Error(), "the pickle makes more than 1048576 values (Options.MaxPickleItems)")
	t.Logf("%d bytes allocated, %v", alloc, took)
	assert.Less(t, alloc, uint64(128<<20))
}

// TestSharedTuples: a tuple of a tuple of ... each twice: 60 levels are
// 2^60 tuples as a tree, which converting once tried to build.
func TestSharedTuples(t *testing.T) {
	var err error
	alloc, _ := measure(func() {
		_, err = loaders.ParseTorchSave("dag.pt", gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: gen.SharedTuplePickle(60)}))
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "archive dag.pt: pickle data.pkl: the pickle makes more values than its item limit allows")
	assert.Less(t, alloc, uint64(4<<20))

	// A few levels are fine: 2^10 tuples from 24 bytes is within the
	// slack of 4096 values.
	v, err := loaders.ParseTorchSave("dag.pt", gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: gen.SharedTuplePickle(10)}))
	require.NoError(t, err)
	assert.Len(t, v.List().Items, 2)
}

// TestLimitsOnFixtures: the defaults load the real archives, and each
// limit, set below what a real archive needs, is an error naming it.
func TestLimitsOnFixtures(t *testing.T) {
	path := filepath.Join(ptfixture.Committed(), "mlp.scripted.pt")
	m, err := loaders.LoadOptions(path, &loaders.Options{})
	require.NoError(t, err)
	m.Close()
	cases := []struct {
		name string
		o    loaders.Options
		want string
	}{
		{"graph nodes", loaders.Options{MaxGraphNodes: 3}, "method forward: the compiled graph has more than 3 nodes (Options.MaxGraphNodes)"},
		{"code size", loaders.Options{MaxCodeSize: 100}, "code limit of 100 bytes (Options.MaxCodeSize)"},
		{"pickle items", loaders.Options{MaxPickleItems: 5}, "Options.MaxPickleItems"},
		{"entry size", loaders.Options{MaxEntrySize: 10}, "more than the entry limit of 10 (Options.MaxEntrySize)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loaders.LoadOptions(path, &tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "archive mlp.scripted.pt")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Negative is no limit.
	m, err = loaders.LoadOptions(path, &loaders.Options{MaxEntrySize: -1, MaxCompressionRatio: -1, MaxPickleItems: -1, MaxCodeSize: -1, MaxGraphNodes: -1})
	require.NoError(t, err)
	m.Close()
}

// TestLoadMemoryIsBounded: loading costs at most twice the weights plus a
// fixed amount, whatever the archive claims: the committed fixtures (real
// archives; their tensors view the file) and the hostile archives, each
// with the default Options.
func TestLoadMemoryIsBounded(t *testing.T) {
	const fixed = 128 << 20
	scripted, err := filepath.Glob(filepath.Join(ptfixture.Committed(), "*.scripted*.pt"))
	require.NoError(t, err)
	traced, err := filepath.Glob(filepath.Join(ptfixture.Committed(), "*.traced*.pt"))
	require.NoError(t, err)
	files := append(scripted, traced...)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		weights := recordBytes(t, data, "/data/", "/constants/")
		var m *loaders.Model
		alloc, _ := measure(func() { m, err = loaders.LoadBytes(filepath.Base(f), data) })
		require.NoError(t, err, f)
		m.Close()
		assert.LessOrEqual(t, alloc, 2*weights+fixed, f)
	}
	save := func(data []byte) func() error {
		return func() error { _, err := loaders.ParseTorchSave("hostile.pt", data); return err }
	}
	script := func(data []byte) func() error {
		return func() error { _, err := loaders.LoadBytes("hostile.pt", data); return err }
	}
	deflated := func(pkl []byte) []byte {
		return gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: pkl, Deflate: true})
	}
	cases := []struct {
		name string
		load func() error
		ok   bool // within the limits: loads
	}{
		{"deep tuple", script(gen.DeepTupleArchive(1_000_000, "size", true)), false},
		{"memo and stack", save(gen.MemoStackArchive(1 << 24)), false},
		{"append", save(deflated(gen.AppendPickle(1 << 24))), false},
		{"append, 1 MiB", save(deflated(gen.AppendPickle(1<<19 - 8))), true},
		{"shared tuples", save(gen.TorchZip(gen.ZipEntry{Name: "data.pkl", Data: gen.SharedTuplePickle(60)})), false},
		{"code bomb", script(gen.CodeBombArchive(1 << 30)), false},
		{"storage", save(gen.TorchZip(
			gen.ZipEntry{Name: "data.pkl", Data: gen.StoragePickle(1e12, 0, []int64{1e12}, []int64{1})},
			gen.ZipEntry{Name: "data/0", Data: make([]byte, 64)})), false},
	}
	for _, tc := range cases {
		var err error
		alloc, took := measure(func() { err = tc.load() })
		if tc.ok {
			assert.NoError(t, err, tc.name)
		} else {
			assert.Error(t, err, tc.name)
		}
		t.Logf("%-14s %10d bytes allocated, %v", tc.name, alloc, took)
		assert.LessOrEqual(t, alloc, uint64(fixed), tc.name)
	}
}

// recordBytes sums the sizes of an archive's records whose names contain
// one of the parts.
func recordBytes(t *testing.T, data []byte, parts ...string) uint64 {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var n uint64
	for _, f := range zr.File {
		for _, p := range parts {
			if strings.Contains(f.Name, p) {
				n += f.UncompressedSize64
				break
			}
		}
	}
	return n
}

// declareCodeSize rewrites archive's header for its code entry to declare
// size bytes uncompressed, leaving the deflated stream as it is.
func declareCodeSize(t *testing.T, archive []byte, size uint64) *bytes.Buffer {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		h := f.FileHeader
		if f.Name == "archive/code/__torch__.py" {
			h.UncompressedSize64 = size
		}
		raw, err := f.OpenRaw()
		require.NoError(t, err)
		w, err := zw.CreateRaw(&h)
		require.NoError(t, err)
		_, err = io.Copy(w, raw)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return &buf
}
