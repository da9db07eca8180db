package loaders

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/pickle"
)

// ReadTorchSave reads a file written by torch.save (the zip format, the
// default since PyTorch 1.6). The file is mapped, not read; tensors view
// the mapping, which is never unmapped, so they may outlive everything
// else. Tensors, tuples, lists, dicts (and OrderedDicts, such as
// state_dicts), ints, floats, bools, strings and None are supported; see
// UnpickleTorch for the mapping.
func ReadTorchSave(path string) (ivalue.IValue, error) {
	return ReadTorchSaveOptions(path, nil)
}

// ReadTorchSaveOptions is ReadTorchSave with limits (nil: the defaults).
func ReadTorchSaveOptions(path string, o *Options) (ivalue.IValue, error) {
	a, err := OpenArchiveOptions(path, o)
	if err != nil {
		return ivalue.None(), err
	}
	return readTorchSave(a)
}

// ParseTorchSave is ReadTorchSave for a file in memory; tensors view data.
func ParseTorchSave(name string, data []byte) (ivalue.IValue, error) {
	return ParseTorchSaveOptions(name, data, nil)
}

// ParseTorchSaveOptions is ParseTorchSave with limits (nil: the defaults).
func ParseTorchSaveOptions(name string, data []byte, o *Options) (ivalue.IValue, error) {
	a, err := ParseArchiveOptions(name, data, o)
	if err != nil {
		return ivalue.None(), err
	}
	return readTorchSave(a)
}

func readTorchSave(a *Archive) (ivalue.IValue, error) {
	if !a.Has("data.pkl") {
		return ivalue.None(), fmt.Errorf("archive %s: no data.pkl entry: not a torch.save file", a.Name())
	}
	return UnpickleTorch(a, "data.pkl", "data")
}

// WriteTorchSave writes v as torch.save(v, path) does (PyTorch 1.13, zip
// format), so that torch.load reads it back.
func WriteTorchSave(path string, v ivalue.IValue) error {
	var buf bytes.Buffer
	if err := EncodeTorchSave(&buf, v); err != nil {
		return fmt.Errorf("torch.save %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// torchSaver turns IValues into the objects torch.save pickles.
type torchSaver struct {
	keys     map[*ivalue.Storage]string
	dtypes   map[*ivalue.Storage]ivalue.DType
	order    []*ivalue.Storage
	lists    map[*ivalue.List]*pickle.List
	dicts    map[*ivalue.Dict]*pickle.Dict
	odict    pickle.Global
	rebuild  pickle.Global
	maxDepth int
}

// EncodeTorchSave writes v to w as torch.save does: a zip of
// archive/data.pkl (protocol 2, storages as persistent ids), one record
// archive/data/<key> per storage (written once however many tensors view
// it; non-contiguous tensors keep their sizes, strides and offset over
// it), and archive/version, each record 64-byte aligned.
func EncodeTorchSave(w io.Writer, v ivalue.IValue) error {
	s := &torchSaver{
		keys: map[*ivalue.Storage]string{}, dtypes: map[*ivalue.Storage]ivalue.DType{},
		lists: map[*ivalue.List]*pickle.List{}, dicts: map[*ivalue.Dict]*pickle.Dict{},
		odict:   pickle.Global{Module: "collections", Name: "OrderedDict"},
		rebuild: pickle.Global{Module: "torch._utils", Name: "_rebuild_tensor_v2"},
	}
	obj, err := s.value(v, 0)
	if err != nil {
		return err
	}
	pkl, err := pickle.Marshal(obj)
	if err != nil {
		return err
	}
	zw := newAlignedZip(w)
	if err := zw.add("archive/data.pkl", pkl); err != nil {
		return err
	}
	// torch.save writes storages in the order of their keys as strings.
	sorted := append([]*ivalue.Storage(nil), s.order...)
	sort.Slice(sorted, func(i, j int) bool { return s.keys[sorted[i]] < s.keys[sorted[j]] })
	for _, st := range sorted {
		if err := zw.add("archive/data/"+s.keys[st], st.Data); err != nil {
			return err
		}
	}
	if err := zw.add("archive/version", []byte("3\n")); err != nil {
		return err
	}
	return zw.close()
}

func (s *torchSaver) value(v ivalue.IValue, depth int) (any, error) {
	if depth > maxConvertDepth {
		return nil, fmt.Errorf("torch.save: values nested more than %d deep", maxConvertDepth)
	}
	switch v.Kind() {
	case ivalue.KindNone:
		return nil, nil
	case ivalue.KindBool:
		return v.Bool(), nil
	case ivalue.KindInt:
		return v.Int(), nil
	case ivalue.KindDouble:
		return v.Double(), nil
	case ivalue.KindString:
		return v.Str(), nil
	case ivalue.KindDevice:
		return &pickle.Reduce{Callable: pickle.Global{Module: "torch", Name: "device"}, Args: pickle.Tuple{v.Str()}}, nil
	case ivalue.KindTensor:
		return s.tensor(v.Tensor())
	case ivalue.KindTuple:
		out := make(pickle.Tuple, len(v.List().Items))
		for i, it := range v.List().Items {
			x, err := s.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case ivalue.KindList:
		if l, ok := s.lists[v.List()]; ok {
			return l, nil
		}
		l := &pickle.List{Items: make([]any, len(v.List().Items))}
		s.lists[v.List()] = l
		for i, it := range v.List().Items {
			x, err := s.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			l.Items[i] = x
		}
		return l, nil
	case ivalue.KindDict:
		src := v.Dict()
		if d, ok := s.dicts[src]; ok {
			return d, nil
		}
		d := &pickle.Dict{}
		s.dicts[src] = d
		for i := range src.Keys {
			k, err := s.value(src.Keys[i], depth+1)
			if err != nil {
				return nil, err
			}
			x, err := s.value(src.Values[i], depth+1)
			if err != nil {
				return nil, err
			}
			if err := d.Set(k, x); err != nil {
				return nil, fmt.Errorf("torch.save: dict key %s: %w", src.Keys[i], err)
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("torch.save: cannot save a value of kind %s", v.Kind())
}

func (s *torchSaver) tensor(t *ivalue.Tensor) (any, error) {
	dt := t.DType()
	es := dt.Size()
	if es == 0 {
		return nil, fmt.Errorf("torch.save: tensor of dtype %s", dt)
	}
	st := t.Storage()
	if st == nil {
		st = &ivalue.Storage{Data: []byte{}}
	}
	key, ok := s.keys[st]
	if !ok {
		key = strconv.Itoa(len(s.order))
		s.keys[st] = key
		s.dtypes[st] = dt
		s.order = append(s.order, st)
	} else if s.dtypes[st] != dt {
		// torch.save refuses this too: a storage has one dtype in a file.
		return nil, fmt.Errorf("torch.save: one storage viewed as %s and as %s", s.dtypes[st], dt)
	}
	sizes := make(pickle.Tuple, t.Dim())
	strides := make(pickle.Tuple, t.Dim())
	for i := range sizes {
		sizes[i] = int64(t.Sizes()[i])
		strides[i] = int64(t.Strides()[i])
	}
	pid := pickle.PersistentID{ID: pickle.Tuple{"storage", pickle.Global{Module: "torch", Name: dt.TorchName() + "Storage"},
		key, "cpu", int64(len(st.Data) / es)}}
	hooks := &pickle.Reduce{Callable: s.odict, Args: pickle.Tuple{}}
	return &pickle.Reduce{Callable: s.rebuild, Args: pickle.Tuple{pid, int64(t.Offset()), sizes, strides, false, hooks}}, nil
}

// alignedZip writes stored records whose data start at a multiple of 64
// bytes, padding the local header's extra field as PyTorch's writer does
// (an "FB" field of 'Z's).
type alignedZip struct {
	ot *offsetTracker
	zw *zip.Writer
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newAlignedZip(w io.Writer) *alignedZip {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	ot := &offsetTracker{bw: bw, cw: cw}
	return &alignedZip{ot: ot, zw: zip.NewWriter(ot)}
}

// offsetTracker lets the zip writer write through a buffer while the
// offset of the next byte stays known.
type offsetTracker struct {
	bw *bufio.Writer
	cw *countWriter
}

func (o *offsetTracker) Write(p []byte) (int, error) { return o.bw.Write(p) }

func (o *offsetTracker) offset() int64 { return o.cw.n + int64(o.bw.Buffered()) }

const recordAlign = 64

func (z *alignedZip) add(name string, data []byte) error {
	if err := z.zw.Flush(); err != nil {
		return err
	}
	off := z.ot.offset()
	start := off + 30 + int64(len(name)) + 4 // local header, name, extra field header
	pad := int((recordAlign - start%recordAlign) % recordAlign)
	extra := make([]byte, 4+pad)
	binary.LittleEndian.PutUint16(extra[0:], 0x4246) // "FB"
	binary.LittleEndian.PutUint16(extra[2:], uint16(pad))
	for i := 4; i < len(extra); i++ {
		extra[i] = 'Z'
	}
	fw, err := z.zw.CreateRaw(&zip.FileHeader{
		Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(data),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data)), Extra: extra,
	})
	if err != nil {
		return err
	}
	_, err = fw.Write(data)
	return err
}

func (z *alignedZip) close() error {
	if err := z.zw.Close(); err != nil {
		return err
	}
	return z.ot.bw.Flush()
}
