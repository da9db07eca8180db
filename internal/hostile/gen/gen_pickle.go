package gen

// Generators of hostile pickles and PyTorch-shaped zip archives: values
// nested millions deep, pickles that fill the unpickler's memo and stack,
// entries that inflate a thousandfold, storages and tensors whose
// declared sizes overflow. They write the bytes opcode by opcode, so each
// input is exactly the one described, whatever gosr's pickler would do.

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Pickle opcodes (pickletools' names).
const (
	opMark           = '('
	opStop           = '.'
	opDup            = '2'
	opEmptyTuple     = ')'
	opEmptyDict      = '}'
	opTuple          = 't'
	opTuple1         = 0x85
	opTuple2         = 0x86
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong1          = 0x8a
	opNewFalse       = 0x89
	opShortBinUnicde = 0x8c
	opGlobal         = 'c'
	opSetItem        = 's'
	opProto          = 0x80
	opMemoize        = 0x94
)

// DeepTupleUses are the places DeepTuplePickle can put its deep tuple.
var DeepTupleUses = []string{
	"value", "pid", "pid-kind", "pid-numel", "size", "stride", "offset",
	"bytearray", "dict-key",
}

// DeepTuplePickle returns a protocol 2 pickle, written as torch.save's
// data.pkl, holding a tuple nested depth deep (((),),)... (one byte per
// level, so depth is about the pickle's size) where use says:
//
//	"value"      the pickled value itself
//	"pid"        the persistent id (BINPERSID's argument)
//	"pid-kind"   the first item of a storage persistent id
//	"pid-numel"  the numel of ('storage', torch.FloatStorage, '0', 'cpu', numel)
//	"size"       the size of torch._utils._rebuild_tensor_v2 over storage '0'
//	"stride"     its stride
//	"offset"     its storage offset
//	"bytearray"  the argument of builtins.bytearray
//	"dict-key"   a dict key
//
// The storage is record data/0 of 4 bytes (DeepTupleArchive writes it).
// Formatting such a value recursively (fmt's %v) overflows the stack; a
// deflated archive of it is a few kilobytes per million levels. Unknown
// uses panic.
func DeepTuplePickle(depth int, use string) []byte {
	var b bytes.Buffer
	b.Write([]byte{opProto, 2})
	deep := func() {
		b.WriteByte(opEmptyTuple)
		b.Write(bytes.Repeat([]byte{opTuple1}, depth))
	}
	storage := func(numel func()) {
		b.WriteByte(opMark)
		shortStr(&b, "storage")
		global(&b, "torch", "FloatStorage")
		shortStr(&b, "0")
		shortStr(&b, "cpu")
		numel()
		b.WriteByte(opTuple)
		b.WriteByte(opBinPersID)
	}
	one := func() { b.Write([]byte{opBinInt1, 1}) }
	rebuild := func(offset, size, stride func()) {
		global(&b, "torch._utils", "_rebuild_tensor_v2")
		b.WriteByte(opMark)
		storage(one)
		offset()
		size()
		stride()
		b.WriteByte(opNewFalse)
		global(&b, "collections", "OrderedDict")
		b.Write([]byte{opEmptyTuple, opReduce})
		b.WriteByte(opTuple)
		b.WriteByte(opReduce)
	}
	zero := func() { b.Write([]byte{opBinInt1, 0}) }
	oneTuple := func() { one(); b.WriteByte(opTuple1) }
	switch use {
	case "value":
		deep()
	case "pid":
		deep()
		b.WriteByte(opBinPersID)
	case "pid-kind":
		b.WriteByte(opMark)
		deep()
		global(&b, "torch", "FloatStorage")
		shortStr(&b, "0")
		shortStr(&b, "cpu")
		one()
		b.WriteByte(opTuple)
		b.WriteByte(opBinPersID)
	case "pid-numel":
		storage(deep)
	case "size":
		rebuild(zero, func() { deep(); b.WriteByte(opTuple1) }, oneTuple)
	case "stride":
		rebuild(zero, oneTuple, func() { deep(); b.WriteByte(opTuple1) })
	case "offset":
		rebuild(deep, oneTuple, oneTuple)
	case "bytearray":
		global(&b, "builtins", "bytearray")
		deep()
		b.WriteByte(opTuple1) // bytearray((deep,))
		b.WriteByte(opTuple1) // the argument tuple
		b.WriteByte(opReduce)
	case "dict-key":
		b.WriteByte(opEmptyDict)
		deep()
		one()
		b.WriteByte(opSetItem)
	default:
		panic(fmt.Sprintf("hostile: DeepTuplePickle: unknown use %q (one of %v)", use, DeepTupleUses))
	}
	b.WriteByte(opStop)
	return b.Bytes()
}

// MemoStackPickle returns a protocol 4 pickle of 2n+4 bytes that pushes
// one dict and then n times DUP and MEMOIZE: n items on the stack and n
// memo entries, two bytes each (about 80 bytes of memory each in a Go
// unpickler, a thousandfold the pickle's size). Deflated, 2^24 of them
// (the old limits) are a 31 KB archive entry.
func MemoStackPickle(n int) []byte {
	b := make([]byte, 0, 2*n+4)
	b = append(b, opProto, 4, opEmptyDict)
	for i := 0; i < n; i++ {
		b = append(b, opDup, opMemoize)
	}
	return append(b, opStop)
}

// AppendPickle returns a protocol 2 pickle of 2n+4 bytes: a list to which
// None is appended n times. The stack never holds more than two items,
// the list ends up with n (16 bytes each in Go, eight times the pickle).
func AppendPickle(n int) []byte {
	b := make([]byte, 0, 2*n+4)
	b = append(b, opProto, 2, ']')
	for i := 0; i < n; i++ {
		b = append(b, 'N', 'a')
	}
	return append(b, opStop)
}

// SharedTuplePickle returns a protocol 2 pickle of 2 bytes a level:
// t0 = (), t(i+1) = (t(i), t(i)), the one tuple twice (DUP). As a tree
// the value has 2^levels tuples: a reader that walks it without sharing
// (converting, hashing, printing) does exponential work.
func SharedTuplePickle(levels int) []byte {
	b := make([]byte, 0, 2*levels+4)
	b = append(b, opProto, 2, opEmptyTuple)
	for i := 0; i < levels; i++ {
		b = append(b, opDup, opTuple2)
	}
	return append(b, opStop)
}

// StoragePickle returns a torch.save data.pkl (protocol 2) holding one
// float32 tensor rebuilt from storage '0' with the given numel, storage
// offset, sizes and strides, as PyTorch writes it: for declared sizes
// that overflow or reach beyond the storage.
func StoragePickle(numel int64, offset int64, sizes, strides []int64) []byte {
	var b bytes.Buffer
	b.Write([]byte{opProto, 2})
	global(&b, "torch._utils", "_rebuild_tensor_v2")
	b.WriteByte(opMark)
	b.WriteByte(opMark)
	shortStr(&b, "storage")
	global(&b, "torch", "FloatStorage")
	shortStr(&b, "0")
	shortStr(&b, "cpu")
	long(&b, numel)
	b.WriteByte(opTuple)
	b.WriteByte(opBinPersID)
	long(&b, offset)
	ints := func(xs []int64) {
		b.WriteByte(opMark)
		for _, x := range xs {
			long(&b, x)
		}
		b.WriteByte(opTuple)
	}
	ints(sizes)
	ints(strides)
	b.WriteByte(opNewFalse)
	global(&b, "collections", "OrderedDict")
	b.Write([]byte{opEmptyTuple, opReduce})
	b.WriteByte(opTuple)
	b.WriteByte(opReduce)
	b.WriteByte(opStop)
	return b.Bytes()
}

func shortStr(b *bytes.Buffer, s string) {
	b.WriteByte(opShortBinUnicde)
	b.WriteByte(byte(len(s)))
	b.WriteString(s)
}

func global(b *bytes.Buffer, module, name string) {
	b.WriteByte(opGlobal)
	b.WriteString(module + "\n" + name + "\n")
}

// long writes x as LONG1 (any int64, as Python's pickler does for ints
// beyond 32 bits).
func long(b *bytes.Buffer, x int64) {
	if x >= 0 && x < 256 {
		b.Write([]byte{opBinInt1, byte(x)})
		return
	}
	var le [8]byte
	binary.LittleEndian.PutUint64(le[:], uint64(x))
	b.Write([]byte{opLong1, 8})
	b.Write(le[:])
}

// ZipEntry is one entry of an archive made by TorchZip.
type ZipEntry struct {
	Name    string // under the archive's top-level folder: "data.pkl", "code/__torch__.py"
	Data    []byte
	Deflate bool // deflated at the best compression, else stored
}

// TorchZip returns a zip archive of the entries under the top-level
// folder "archive/", as torch.save and torch.jit.save lay them out.
func TorchZip(entries ...ZipEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// Deflate at the best ratio: these archives should be small.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, e := range entries {
		h := &zip.FileHeader{Name: "archive/" + e.Name, Method: zip.Store}
		if e.Deflate {
			h.Method = zip.Deflate
		}
		w, err := zw.CreateHeader(h)
		if err == nil {
			_, err = w.Write(e.Data)
		}
		if err != nil {
			panic(fmt.Sprintf("hostile: TorchZip: %v", err)) // writing to memory does not fail
		}
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("hostile: TorchZip: %v", err))
	}
	return buf.Bytes()
}

// DeepTupleArchive is DeepTuplePickle(depth, use) as the deflated data.pkl
// of a torch.save archive, with the 4-byte storage data/0 it refers to
// and, when script is set, a code/__torch__.py entry so that loaders.Load
// takes it for a TorchScript archive. A depth of 2^24 is about 17 KB.
func DeepTupleArchive(depth int, use string, script bool) []byte {
	entries := []ZipEntry{
		{Name: "data.pkl", Data: DeepTuplePickle(depth, use), Deflate: true},
		{Name: "data/0", Data: make([]byte, 4)},
		{Name: "version", Data: []byte("3\n")},
	}
	if script {
		entries = append(entries, ZipEntry{Name: "code/__torch__.py", Data: []byte(minimalCode)})
	}
	return TorchZip(entries...)
}

// MemoStackArchive is MemoStackPickle(n) as the deflated data.pkl of a
// torch.save archive: n = 2^24 is a 31 KB file.
func MemoStackArchive(n int) []byte {
	return TorchZip(
		ZipEntry{Name: "data.pkl", Data: MemoStackPickle(n), Deflate: true},
		ZipEntry{Name: "version", Data: []byte("3\n")},
	)
}

// minimalCode is the code of a TorchScript module returning its input.
const minimalCode = "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n    return x\n"

// minimalModulePickle is the data.pkl of that module, frozen: an object
// of class __torch__.M without attributes.
func minimalModulePickle() []byte {
	var b bytes.Buffer
	b.Write([]byte{opProto, 2})
	global(&b, "__torch__", "M")
	b.Write([]byte{opEmptyTuple, 0x81}) // NEWOBJ
	b.WriteByte(opEmptyDict)
	b.WriteByte('b') // BUILD
	b.WriteByte(opStop)
	return b.Bytes()
}

// ScriptArchive returns a TorchScript archive (as torch.jit.save writes
// one) of a module whose forward returns its input, with extra entries
// added: a base for archives that differ from a valid one in one entry.
func ScriptArchive(extra ...ZipEntry) []byte {
	entries := []ZipEntry{
		{Name: "data.pkl", Data: minimalModulePickle()},
		{Name: "code/__torch__.py", Data: []byte(minimalCode), Deflate: true},
		{Name: "version", Data: []byte("3\n")},
	}
	return TorchZip(append(entries, extra...)...)
}

// CodeBombArchive returns a TorchScript archive whose code/__torch__.py
// entry is the module's code followed by inflated bytes of blank lines,
// deflated: 1 GiB is a 1.1 MB file. The entry's sizes and CRC are right
// (the deflate stream is made of one compressed megabyte repeated, so it
// is written in milliseconds): only its size is hostile.
func CodeBombArchive(inflated int64) []byte {
	const chunk = 1 << 20
	head := []byte(minimalCode)
	blank := bytes.Repeat([]byte{'\n'}, chunk)
	n := inflated / chunk
	tail := blank[:inflated%chunk]

	// Each part is deflated on its own and flushed to a byte boundary, so
	// that the parts concatenate into one stream: a part's matches only
	// reach back into the part itself.
	part := func(p []byte) []byte {
		var c bytes.Buffer
		w, _ := flate.NewWriter(&c, flate.BestCompression)
		w.Write(p)
		w.Flush()
		return c.Bytes()
	}
	var stream bytes.Buffer
	stream.Write(part(head))
	blankZ := part(blank)
	crc := crc32.ChecksumIEEE(head)
	for i := int64(0); i < n; i++ {
		stream.Write(blankZ)
		crc = crc32.Update(crc, crc32.IEEETable, blank)
	}
	stream.Write(part(tail))
	crc = crc32.Update(crc, crc32.IEEETable, tail)
	stream.Write([]byte{0x03, 0x00}) // an empty final block

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "archive/" + name, Method: zip.Store})
		w.Write(data)
	}
	add("data.pkl", minimalModulePickle())
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "archive/code/__torch__.py", Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(stream.Len()), UncompressedSize64: uint64(int64(len(head)) + inflated),
	})
	if err == nil {
		_, err = w.Write(stream.Bytes())
	}
	if err != nil {
		panic(fmt.Sprintf("hostile: CodeBombArchive: %v", err))
	}
	add("version", []byte("3\n"))
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("hostile: CodeBombArchive: %v", err))
	}
	return buf.Bytes()
}
