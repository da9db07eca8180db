package loaders

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenArchive(t *testing.T) {
	a, err := OpenArchive(filepath.Join("testdata", "pickle", "attrs.pt"))
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, "attrs.pt", a.Name())
	assert.Equal(t, "attrs/", a.Prefix())
	assert.True(t, a.Mapped())
	assert.True(t, a.Has("data.pkl"))
	assert.False(t, a.Has("attrs/data.pkl"))
	assert.Contains(t, a.Records(), "constants.pkl")
	assert.Contains(t, a.Records(), "code/__torch__.py")
	require.NoError(t, a.Verify())

	v, err := a.Record("version")
	require.NoError(t, err)
	assert.Equal(t, "3\n", string(v))
	// Code is deflated in torch.jit.save archives: decompressed on read.
	code, err := a.Record("code/__torch__.py")
	require.NoError(t, err)
	assert.Contains(t, string(code), "class Attrs(Module):")

	_, err = a.Record("data/99")
	assert.EqualError(t, err, `archive attrs.pt: entry "data/99": missing`)
}

func TestArchiveRecordsAreZeroCopyAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pt")
	orig, err := os.ReadFile(filepath.Join("testdata", "torchsave", "scalar.pt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, orig, 0o644))
	a, err := OpenArchive(path)
	require.NoError(t, err)
	r1, err := a.Record("data/0")
	require.NoError(t, err)
	r2, err := a.Record("data/0")
	require.NoError(t, err)
	assert.Same(t, &r1[0], &r2[0], "records are slices of the mapping")
	r1[0] ^= 0xff // copy-on-write: the file is untouched
	require.NoError(t, a.Close())
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, orig, now)
}

func TestArchiveAcquireClose(t *testing.T) {
	a, err := OpenArchive(filepath.Join("testdata", "torchsave", "scalar.pt"))
	require.NoError(t, err)
	a.Acquire()
	require.NoError(t, a.Close())
	_, err = a.Record("data/0")
	require.NoError(t, err, "still held by the second reference")
	require.NoError(t, a.Close())
	_, err = a.Record("data/0")
	assert.ErrorContains(t, err, "closed")
	require.NoError(t, a.Close(), "extra Close is a no-op")
}

// findSig returns the offset of the first central directory header.
func findSig(b []byte, sig uint32) int {
	var s [4]byte
	binary.LittleEndian.PutUint32(s[:], sig)
	return bytes.Index(b, s[:])
}

func TestArchiveCorrupt(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "torchsave", "nest.pt"))
	require.NoError(t, err)
	cd := findSig(good, 0x02014b50)
	require.Positive(t, cd)
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	tests := []struct {
		name   string
		data   []byte
		rec    string // when parsing succeeds, the record that must fail
		substr string
	}{
		{"empty", nil, "", "not a readable zip file"},
		{"truncated", good[:len(good)/2], "", "not a readable zip file"},
		{"no end record", good[:len(good)-10], "", "not a readable zip file"},
		{"garbage", []byte("not a zip at all, not at all"), "", "not a readable zip file"},
		{"corrupt central directory", mod(func(b []byte) { copy(b[cd:], "XXXXXXXX") }), "", "not a readable zip file"},
		{"entry beyond the file", mod(func(b []byte) {
			// The first entry's local header offset, in its central header.
			binary.LittleEndian.PutUint32(b[cd+42:], uint32(len(b)-10))
		}), "data.pkl", `entry "data.pkl"`},
		{"size beyond the file", mod(func(b []byte) {
			binary.LittleEndian.PutUint32(b[cd+20:], 1<<30)
			binary.LittleEndian.PutUint32(b[cd+24:], 1<<30)
		}), "data.pkl", `entry "data.pkl": truncated`},
		{"compressed size mismatch", mod(func(b []byte) {
			binary.LittleEndian.PutUint32(b[cd+20:], 3)
		}), "data.pkl", "compressed size 3 differs"},
		{"unknown method", mod(func(b []byte) {
			binary.LittleEndian.PutUint16(b[cd+10:], 99)
		}), "data.pkl", "compression method 99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseArchive("model.pt", tc.data)
			if tc.rec == "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "archive model.pt: ")
				assert.Contains(t, err.Error(), tc.substr)
				return
			}
			require.NoError(t, err)
			_, err = a.Record(tc.rec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "archive model.pt: ")
			assert.Contains(t, err.Error(), tc.substr)
			_, err = ParseTorchSave("model.pt", tc.data)
			assert.Error(t, err)
		})
	}
}

// ZIP64: Python's force_zip64 (zip64 extra fields in the local headers),
// and a Go-written archive with more entries than the classic end record
// can count (zip64 end of central directory).
func TestArchiveZip64(t *testing.T) {
	a, err := OpenArchive(filepath.Join("testdata", "pickle", "zip64.zip"))
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, "z64/", a.Prefix())
	v, err := a.Record("version")
	require.NoError(t, err)
	assert.Equal(t, "3\n", string(v))
	require.NoError(t, a.Verify())

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	const n = 1<<16 + 10
	for i := 0; i < n; i++ {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("big/r%d", i), Method: zip.Store})
		require.NoError(t, err)
		fmt.Fprintf(w, "%d", i)
	}
	require.NoError(t, zw.Close())
	require.Positive(t, findSig(buf.Bytes(), 0x06064b50), "zip64 end record written")
	a, err = ParseArchive("big.zip", buf.Bytes())
	require.NoError(t, err)
	assert.Len(t, a.Records(), n)
	r, err := a.Record(fmt.Sprintf("r%d", n-1))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(n-1), string(r))
}

func TestArchiveNoFolder(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("data.pkl")
	w.Write([]byte("N."))
	require.NoError(t, zw.Close())
	_, err := ParseArchive("flat.zip", buf.Bytes())
	assert.ErrorContains(t, err, `archive flat.zip: entry "data.pkl" is not under a top-level folder`)
}
