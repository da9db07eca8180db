package gen

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBomb: the stream inflates to head and n copies of fill, with the
// checksum and size the entry declares, from far fewer bytes.
func TestBomb(t *testing.T) {
	head, fill := []byte("class M(Module):\n"), bytes.Repeat([]byte("\n"), 1<<16)
	b := Bomb(head, fill, 64)
	got, err := Inflate(b.Raw)
	require.NoError(t, err)
	want := append(bytes.Clone(head), bytes.Repeat(fill, 64)...)
	assert.Equal(t, want, got)
	assert.Equal(t, uint64(len(want)), b.Size)
	assert.Equal(t, crc32.ChecksumIEEE(want), b.CRC32)
	assert.Less(t, len(b.Raw)*200, len(want), "ratio")

	// In an archive, archive/zip reads it back and checks the CRC.
	b.Name = "code/__torch__.py"
	z := BuildArchive("m", Entry{Name: "data.pkl", Data: []byte("x")}, b)
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	require.NoError(t, err)
	require.Len(t, zr.File, 2)
	assert.Equal(t, "m/code/__torch__.py", zr.File[1].Name)
	rc, err := zr.File[1].Open()
	require.NoError(t, err)
	got, err = io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestEditCentral: the edits land on the named entry's directory record
// and the end record, and archive/zip sees them.
func TestEditCentral(t *testing.T) {
	z := BuildArchive("m", Entry{Name: "a", Data: []byte("aaaa")}, Entry{Name: "b", Data: []byte("bb")})
	offs, names := CentralEntries(z)
	assert.Equal(t, []string{"m/a", "m/b"}, names)
	require.Len(t, offs, 2)
	z2 := EditCentral(z, "b", func(rec []byte) { PutU32(rec, CenCRC, 7) })
	assert.NotEqual(t, z, z2)
	zr, err := zip.NewReader(bytes.NewReader(z2), int64(len(z2)))
	require.NoError(t, err)
	assert.Equal(t, uint32(7), zr.File[1].CRC32)
	assert.Equal(t, crc32.ChecksumIEEE([]byte("aaaa")), zr.File[0].CRC32)
	z3 := EditEnd(z, func(end []byte) { PutU16(end, 10, 1); PutU16(end, 8, 1) })
	zr, err = zip.NewReader(bytes.NewReader(z3), int64(len(z3)))
	if err == nil {
		assert.Len(t, zr.File, 1)
	}
	assert.Len(t, ManyEntries(3), 3)
}
