package gen

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strconv"
)

// Entry is one record of an archive to build: Name is relative to the
// archive's folder ("data.pkl", "code/__torch__.py", "constants/0").
type Entry struct {
	Name    string
	Data    []byte
	Deflate bool // compress it (torch.jit.save stores all but code)
	// Raw, when set, is written as the entry's compressed bytes with the
	// sizes and CRC given, not checked: a stream that inflates to Size
	// bytes of CRC32 from a Raw much smaller (a bomb), or a lie.
	Raw   []byte
	Size  uint64
	CRC32 uint32
}

// BuildArchive assembles a zip as torch.jit.save writes it, every entry
// under folder/.
func BuildArchive(folder string, entries ...Entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: folder + "/" + e.Name, Method: zip.Store}
		if e.Deflate || e.Raw != nil {
			h.Method = zip.Deflate
		}
		if e.Raw != nil {
			h.CompressedSize64, h.UncompressedSize64, h.CRC32 = uint64(len(e.Raw)), e.Size, e.CRC32
			w, err := zw.CreateRaw(h)
			mustBuild(err)
			_, err = w.Write(e.Raw)
			mustBuild(err)
			continue
		}
		w, err := zw.CreateHeader(h)
		mustBuild(err)
		_, err = w.Write(e.Data)
		mustBuild(err)
	}
	mustBuild(zw.Close())
	return buf.Bytes()
}

func mustBuild(err error) {
	if err != nil {
		panic(err) // only on a bug in a generator: bytes.Buffer never fails
	}
}

// Bomb is a deflate stream that inflates to head followed by n copies of
// fill, built without inflating it once: fill compressed on its own is
// repeated (each copy's blocks are not final, and a stream may be a run
// of blocks), so a bomb of a gigabyte costs about a megabyte and the
// checksum of the bytes it stands for. len(fill) should be about 1 MiB
// for the ratio deflate allows (about 1000:1).
func Bomb(head, fill []byte, n int) Entry {
	part := func(b []byte) []byte {
		var out bytes.Buffer
		fw, err := flate.NewWriter(&out, flate.BestCompression)
		mustBuild(err)
		_, err = fw.Write(b)
		mustBuild(err)
		mustBuild(fw.Flush()) // ends on a byte boundary with a non-final empty block
		return out.Bytes()
	}
	h, f := part(head), part(fill)
	pkRaw := make([]byte, 0, len(h)+n*len(f)+2)
	pkRaw = append(pkRaw, h...)
	crc := crc32.Update(0, crc32.IEEETable, head)
	for range n {
		pkRaw = append(pkRaw, f...)
		crc = crc32.Update(crc, crc32.IEEETable, fill)
	}
	pkRaw = append(pkRaw, 0x03, 0x00) // a final, empty, fixed-Huffman block
	return Entry{Raw: pkRaw, Size: uint64(len(head)) + uint64(n)*uint64(len(fill)), CRC32: crc}
}

// Inflate is the whole of a Bomb's stream (for the generator's test).
func Inflate(pkRaw []byte) ([]byte, error) {
	return io.ReadAll(flate.NewReader(bytes.NewReader(pkRaw)))
}

// ManyEntries is n empty stored entries named folder/junk/<i>: a zip
// directory of n records.
func ManyEntries(n int) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = Entry{Name: "junk/" + strconv.Itoa(i)}
	}
	return out
}

// zip record signatures and the fields the mutations below edit.
const (
	SigCentral = 0x02014b50
	SigEnd     = 0x06054b50
)

// EOCD finds the end-of-central-directory record.
func EOCD(z []byte) int {
	for i := len(z) - 22; i >= 0; i-- {
		if binary.LittleEndian.Uint32(z[i:]) == SigEnd {
			return i
		}
	}
	panic("hostile: no end of central directory")
}

// CentralEntries returns the offsets of the central directory's records
// in z and their names.
func CentralEntries(z []byte) (offs []int, names []string) {
	e := EOCD(z)
	off := int(binary.LittleEndian.Uint32(z[e+16:]))
	n := int(binary.LittleEndian.Uint16(z[e+10:]))
	for range n {
		if binary.LittleEndian.Uint32(z[off:]) != SigCentral {
			panic("hostile: bad central directory")
		}
		nl := int(binary.LittleEndian.Uint16(z[off+28:]))
		xl := int(binary.LittleEndian.Uint16(z[off+30:]))
		cl := int(binary.LittleEndian.Uint16(z[off+32:]))
		offs = append(offs, off)
		names = append(names, string(z[off+46:off+46+nl]))
		off += 46 + nl + xl + cl
	}
	return offs, names
}

// EditCentral returns a copy of z in which edit has changed the central
// directory record of the entry named name (relative to folder/, as in
// Entry) in place: the record's bytes from its signature.
func EditCentral(z []byte, name string, edit func(rec []byte)) []byte {
	z = bytes.Clone(z)
	offs, names := CentralEntries(z)
	for i, n := range names {
		if n == name || bytes.HasSuffix([]byte(n), []byte("/"+name)) {
			edit(z[offs[i]:])
			return z
		}
	}
	panic("hostile: no entry " + name)
}

// Central directory record fields (offsets from its signature).
const (
	CenCRC      = 16
	CenCompSize = 20
	CenSize     = 24
	CenLocalOff = 42
)

// PutU32 writes v at b[off:] little-endian (for EditCentral).
func PutU32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }

// U32 reads b[off:] little-endian.
func U32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// EditEnd returns a copy of z with the end-of-central-directory record
// changed by edit (offsets from its signature: 8 entries on this disk, 10
// entries, 12 directory size, 16 directory offset, 20 comment length).
func EditEnd(z []byte, edit func(end []byte)) []byte {
	z = bytes.Clone(z)
	edit(z[EOCD(z):])
	return z
}

// PutU16 writes v at b[off:] little-endian.
func PutU16(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }
