package loaders

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Archive is the zip container torch.jit.save and torch.save write: every
// entry lies under one top-level folder ("mlp/data.pkl", "mlp/data/0",
// ...), records are stored uncompressed and 64-byte aligned, so that
// Record can hand out slices of the file's memory without a copy.
//
// An Archive from OpenArchive maps the file; tensors made from its records
// view that mapping. The mapping is reference counted: the opener holds
// one reference, Acquire and Retain take more, and the last Close (or
// release) unmaps it. A loaded Model holds one until Model.Close, and a
// graph's Backing is its archive, so that a StaticModule prepared from the
// graph retains it for as long as it runs: closing the Model early is
// safe. Records and tensors used outside such a reference after the last
// release fault the process; Record itself returns an error once the
// archive is closed. An Archive dropped without Close stays mapped for the
// life of the process (there is no finalizer: tensors may outlive the
// Archive value).
type Archive struct {
	name   string
	prefix string
	data   []byte
	mapped bool
	files  map[string]*zip.File // by path relative to prefix
	recs   []string
	lim    limits

	mu   sync.Mutex
	refs int // Close calls left before the mapping is released
}

// OpenArchive maps path into memory (copy-on-write, so that writing into a
// tensor viewing a record never faults and never reaches the file) and
// reads its zip directory. If mapping fails, the file is read instead.
// The default Options apply.
func OpenArchive(path string) (*Archive, error) { return OpenArchiveOptions(path, nil) }

// OpenArchiveOptions is OpenArchive with limits (nil: the defaults); the
// archive keeps them for every record and pickle read from it.
func OpenArchiveOptions(path string, o *Options) (*Archive, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	var data []byte
	mapped := false
	if size := st.Size(); size > 0 && size == int64(int(size)) {
		if data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE); err == nil {
			mapped = true
		} else {
			data = nil
		}
	}
	if !mapped {
		if data, err = io.ReadAll(f); err != nil {
			return nil, fmt.Errorf("archive %s: %w", name, err)
		}
	}
	a, err := ParseArchiveOptions(name, data, o)
	if err != nil {
		if mapped {
			syscall.Munmap(data)
		}
		return nil, err
	}
	a.mapped = mapped
	return a, nil
}

// ParseArchive reads the zip directory of an archive already in memory.
// Records are slices of data. The default Options apply.
func ParseArchive(name string, data []byte) (*Archive, error) {
	return ParseArchiveOptions(name, data, nil)
}

// ParseArchiveOptions is ParseArchive with limits (nil: the defaults).
func ParseArchiveOptions(name string, data []byte, o *Options) (*Archive, error) {
	a := &Archive{name: name, data: data, files: map[string]*zip.File{}, refs: 1, lim: o.limits()}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if len(data) >= 2 && data[0] == 0x80 && data[1] == 0x02 {
			return nil, fmt.Errorf("archive %s: not a zip file: this looks like the legacy torch.save format (PyTorch < 1.6 or _use_new_zipfile_serialization=False), which is not supported: save with PyTorch >= 1.6 defaults", name)
		}
		return nil, fmt.Errorf("archive %s: not a readable zip file: %w", name, err)
	}
	if len(zr.File) == 0 {
		return nil, fmt.Errorf("archive %s: no entries", name)
	}
	first := zr.File[0].Name
	i := strings.IndexByte(first, '/')
	if i <= 0 {
		return nil, fmt.Errorf("archive %s: entry %q is not under a top-level folder, as PyTorch archives are", name, first)
	}
	a.prefix = first[:i+1]
	for _, f := range zr.File {
		// PyTorch's reader looks records up under the first entry's
		// folder and ignores the rest; so do we.
		rel, ok := strings.CutPrefix(f.Name, a.prefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") {
			continue
		}
		if _, dup := a.files[rel]; dup {
			return nil, fmt.Errorf("archive %s: entry %q appears twice", name, f.Name)
		}
		a.files[rel] = f
		a.recs = append(a.recs, rel)
	}
	sort.Strings(a.recs)
	return a, nil
}

// Name is the archive's file name, used in errors.
func (a *Archive) Name() string { return a.name }

// Prefix is the top-level folder of the entries, with its slash ("mlp/").
func (a *Archive) Prefix() string { return a.prefix }

// Has reports whether the record exists (rec is relative to Prefix).
func (a *Archive) Has(rec string) bool {
	_, ok := a.files[rec]
	return ok
}

// Records lists the records, relative to Prefix, sorted.
func (a *Archive) Records() []string { return append([]string(nil), a.recs...) }

// Mapped reports whether the archive's bytes are a memory mapping.
func (a *Archive) Mapped() bool { return a.mapped }

// Record returns a record's bytes. A stored record (PyTorch stores them
// all, except code in torch.jit.save archives) is a slice of the archive's
// memory, not a copy: do not keep it past Close; writing to it changes no
// file. A deflated record is decompressed into new memory, within the
// archive's Options (MaxEntrySize, MaxCompressionRatio): an entry that
// would inflate beyond them is an error before anything is inflated.
func (a *Archive) Record(rec string) ([]byte, error) {
	f, ok := a.files[rec]
	if !ok {
		return nil, fmt.Errorf("archive %s: entry %q: missing", a.name, rec)
	}
	// A reference for the read, so that a Close on another goroutine
	// cannot unmap the bytes under a decompression or a bounds check.
	data, err := a.hold()
	if err != nil {
		return nil, fmt.Errorf("archive %s: entry %q: %w", a.name, rec, err)
	}
	defer a.Close()
	switch f.Method {
	case zip.Store:
		if f.CompressedSize64 != f.UncompressedSize64 {
			return nil, fmt.Errorf("archive %s: entry %q: stored, but compressed size %d differs from size %d", a.name, rec, f.CompressedSize64, f.UncompressedSize64)
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("archive %s: entry %q: bad local header: %v", a.name, rec, err)
		}
		n := f.UncompressedSize64
		if off < 0 || uint64(off) > uint64(len(data)) || n > uint64(len(data))-uint64(off) {
			return nil, fmt.Errorf("archive %s: entry %q: truncated: %d bytes at offset %d go beyond the file (%d bytes)", a.name, rec, n, off, len(data))
		}
		return data[off : off+int64(n) : off+int64(n)], nil
	case zip.Deflate:
		return a.inflate(rec, f)
	}
	return nil, fmt.Errorf("archive %s: entry %q: compression method %d is not supported (stored or deflated)", a.name, rec, f.Method)
}

// inflate decompresses a deflated record. The declared size is checked
// against the limits first, and the zip reader never inflates beyond it
// (it fails on more data, and checks the CRC at the end), so a record
// costs at most its declared size, allocated once.
func (a *Archive) inflate(rec string, f *zip.File) ([]byte, error) {
	n := f.UncompressedSize64
	// The compressed bytes the reader can reach: the declared compressed
	// size, within what the file holds.
	comp := f.CompressedSize64
	if off, err := f.DataOffset(); err == nil && off >= 0 && uint64(off) <= uint64(len(a.data)) {
		comp = min(comp, uint64(len(a.data))-uint64(off))
	}
	// Whatever the limits, deflate cannot inflate beyond 1032:1 (a
	// 258-byte match in two bits): a larger declared size is a lie that
	// must not size an allocation.
	if n > 1040*comp+1024 {
		return nil, fmt.Errorf("archive %s: entry %q: %d bytes compressed cannot inflate to the %d its header declares", a.name, rec, comp, n)
	}
	if r := a.lim.MaxCompressionRatio; r >= 0 && n > ratioExempt && n/uint64(r) > comp {
		return nil, fmt.Errorf("archive %s: entry %q: %d bytes compressed inflate to %d, a ratio over the limit of %d:1 (Options.MaxCompressionRatio)", a.name, rec, comp, n, r)
	}
	if max := a.lim.MaxEntrySize; max >= 0 && n > uint64(max) {
		return nil, fmt.Errorf("archive %s: entry %q: inflates to %d bytes, more than the entry limit of %d (Options.MaxEntrySize)", a.name, rec, n, max)
	}
	if n > math.MaxInt-1 {
		return nil, fmt.Errorf("archive %s: entry %q: %d bytes uncompressed is too large", a.name, rec, n)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("archive %s: entry %q: %v", a.name, rec, err)
	}
	defer rc.Close()
	b := make([]byte, n)
	got, err := io.ReadFull(io.LimitReader(rc, int64(n)), b)
	if err != nil {
		return nil, fmt.Errorf("archive %s: entry %q: decompressed to %d bytes, header says %d: %v", a.name, rec, got, n, err)
	}
	// The end of the stream: the zip reader reports more data than
	// declared, or a bad CRC, here.
	var one [1]byte
	if k, err := rc.Read(one[:]); k != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("more data than declared")
		}
		return nil, fmt.Errorf("archive %s: entry %q: %v", a.name, rec, err)
	}
	return b, nil
}

// size is a record's declared (uncompressed) size; 0 for a missing one.
func (a *Archive) size(rec string) int64 {
	f, ok := a.files[rec]
	if !ok {
		return 0
	}
	return int64(min(f.UncompressedSize64, math.MaxInt64))
}

// Verify checks every record's CRC-32. Record does not (it would read every
// page of a mapped file up front).
func (a *Archive) Verify() error {
	for _, rec := range a.recs {
		b, err := a.Record(rec)
		if err != nil {
			return err
		}
		if f := a.files[rec]; f.Method == zip.Store && crc32.ChecksumIEEE(b) != f.CRC32 {
			return fmt.Errorf("archive %s: entry %q: CRC-32 mismatch (corrupt data)", a.name, rec)
		}
	}
	return nil
}

// errClosed is what Record and Retain return once the mapping is gone.
var errClosed = errors.New("the archive is closed")

// hold takes a reference and returns the archive's bytes, or errClosed.
func (a *Archive) hold() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs <= 0 {
		return nil, errClosed
	}
	a.refs++
	return a.data, nil
}

// Acquire takes another reference: the mapping stays until Close has been
// called once more than Acquire. A model that keeps tensors viewing the
// archive acquires it and closes it when it is closed itself. Acquire on
// a closed archive takes nothing (and its Close does nothing): use Retain
// where that must be an error.
func (a *Archive) Acquire() *Archive {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs > 0 {
		a.refs++
	}
	return a
}

// Retain takes a reference as graph.Backing asks: release gives it back
// (once, however often it is called). Once the archive is closed it
// fails, naming the archive. The loaders make the archive the Backing of
// the graphs whose constants view it.
func (a *Archive) Retain() (release func(), err error) {
	if _, err := a.hold(); err != nil {
		return nil, fmt.Errorf("archive %s: %w: the tensors read from it are gone", a.name, err)
	}
	var once sync.Once
	return func() { once.Do(func() { a.Close() }) }, nil //nolint:errcheck // an unmap error leaves nothing to undo
}

// Close releases one reference; the last unmaps the file. Tensors and
// records viewing a mapped archive must not be used after that. Closing
// more often than opened and acquired is a no-op.
func (a *Archive) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs <= 0 {
		return nil
	}
	a.refs--
	if a.refs > 0 || !a.mapped {
		return nil
	}
	data := a.data
	a.data = nil
	if err := syscall.Munmap(data); err != nil {
		return fmt.Errorf("archive %s: unmap: %w", a.name, err)
	}
	return nil
}
