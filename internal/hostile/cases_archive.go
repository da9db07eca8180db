package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/gosr/gosr/internal/hostile/gen"
	"math"
	"strings"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
)

// loadOnly loads an archive and closes it: for inputs that must be
// refused at load, before anything runs.
func loadOnly(a []byte) error {
	m, err := loaders.LoadBytes("hostile.pt", a)
	if err == nil {
		m.Close()
	}
	return err
}

func archiveCase(class, name string, e expect, memory int64, build func() []byte) Case {
	return Case{Name: class + "/" + name, Class: class, Memory: memory, Run: func() error {
		a := build()
		if e == mustReject {
			// Refused at load: nothing of it may run.
			return rejected(loadOnly(a), "the archive (%d bytes)", len(a))
		}
		outs, err := runArchive(a)
		return judge(e, outs, err, func(outs []ivalue.IValue) error { return expectTensor(outs, x4()) }, "%s", name)
	}}
}

// tensorConst is constArchive with c0 of the geometry given over a
// storage of numel floats (a record of 64, or of numel when more).
func tensorConst(numel, offset int64, sizes, strides []int64) func() []byte {
	return func() []byte {
		rec := 64
		if numel > 16 && numel <= 1<<20 {
			rec = 4 * int(numel)
		}
		return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n",
			gen.Entry{Name: "constants.pkl", Data: constantsOf(func(p *pk) { p.tensor("0", numel, offset, sizes, strides) }), Deflate: true},
			gen.Entry{Name: "constants/0", Data: make([]byte, rec)})
	}
}

// Huge declared sizes: storages, views and shapes whose sizes overflow or
// reach past what the file holds.
func hugeSizeCases() []Case {
	const t32 = int64(1) << 32
	c := func(name string, e expect, build func() []byte) Case {
		return archiveCase(ClassHugeSize, name, e, 0, build)
	}
	return []Case{
		c("storage-numel-1e12", mustReject, tensorConst(1e12, 0, []int64{1, 4}, []int64{4, 1})),
		c("storage-numel-2^61", mustReject, tensorConst(1<<61, 0, []int64{1, 4}, []int64{4, 1})),
		c("storage-numel-2^63-1", mustReject, tensorConst(math.MaxInt64, 0, []int64{1, 4}, []int64{4, 1})),
		c("storage-numel-negative", mustReject, tensorConst(-1, 0, []int64{1, 4}, []int64{4, 1})),
		// torch.load refuses it: "numel: integer multiplication overflow".
		c("numel-overflow-2^32x2^32x64", mustReject, tensorConst(64, 0, []int64{t32, t32, 64}, []int64{0, 0, 1})),
		c("numel-overflow-2^62x4", mustReject, tensorConst(16, 0, []int64{1 << 62, 4}, []int64{0, 1})),
		c("numel-overflow-2^21-cubed", mustReject, tensorConst(16, 0, []int64{1 << 21, 1 << 21, 1 << 21}, []int64{0, 0, 0})),
		c("extent-overflow-2^31x2^31", mustReject, tensorConst(16, 0, []int64{1 << 31, 1 << 31}, []int64{1 << 31, 1 << 31})),
		c("extent-overflow-stride-2^62", mustReject, tensorConst(16, 0, []int64{2, 4}, []int64{1 << 62, 1})),
		c("size-negative", mustReject, tensorConst(16, 0, []int64{-1, 4}, []int64{4, 1})),
		c("size-2^63-1", mustReject, tensorConst(16, 0, []int64{math.MaxInt64}, []int64{1})),
		c("stride-negative", mustReject, tensorConst(16, 0, []int64{1, 4}, []int64{4, -1})),
		c("offset-beyond-storage", mustReject, tensorConst(16, 100, []int64{1, 4}, []int64{4, 1})),
		c("offset-negative", mustReject, tensorConst(16, -1, []int64{1, 4}, []int64{4, 1})),
		c("offset-2^62", mustReject, tensorConst(16, 1<<62, []int64{1, 4}, []int64{4, 1})),
		c("view-past-storage-end", mustReject, tensorConst(16, 13, []int64{1, 4}, []int64{4, 1})),
		c("sizes-strides-lengths-differ", mustReject, tensorConst(16, 0, []int64{1, 4}, []int64{1})),
		// Legal in a file; a rank no model has.
		archiveCase(ClassHugeSize, "rank-100k", either, 0, func() []byte {
			sizes, strides := make([]int64, 100_000), make([]int64, 100_000)
			for i := range sizes {
				sizes[i], strides[i] = 1, 1
			}
			return tensorConst(16, 0, sizes, strides)()
		}),
		c("storage-two-dtypes", mustReject, func() []byte {
			return constArchive(constantsOf(c0, func(p *pk) {
				p.rebuild(func(p *pk) { p.persid("LongStorage", "0", 8) },
					func(p *pk) { p.int(0) }, func(p *pk) { p.ints(1, 4) }, func(p *pk) { p.ints(4, 1) })
			}))
		}),
		// A legal expanded view of 2^40 elements over one: loading it is
		// fine (torch.load does), running relu on it needs 4 TB.
		{Name: ClassHugeSize + "/expanded-2^40-run", Class: ClassHugeSize, Run: func() error {
			a := scriptArchive("    return torch.relu(CONSTANTS.c0)\n",
				gen.Entry{Name: "constants.pkl", Data: constantsOf(func(p *pk) { p.tensor("0", 16, 0, []int64{1 << 40}, []int64{0}) })},
				gen.Entry{Name: "constants/0", Data: make([]byte, 64)})
			outs, err := runArchive(a)
			if err != nil {
				return err
			}
			return Wrongf("relu of 2^40 elements gave %v", kinds(outs))
		}},
		{Name: ClassHugeSize + "/newtensor-numel-overflow", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t := ivalue.NewTensor(ivalue.Float32, 1<<32, 1<<32, 64)
				return Wrongf("NewTensor(Float32, 2^32, 2^32, 64) gave a tensor of numel %d", t.Numel())
			})
		}},
		{Name: ClassHugeSize + "/newtensor-negative-size", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t := ivalue.NewTensor(ivalue.Float32, -4, 4)
				return Wrongf("NewTensor(Float32, -4, 4) gave a tensor of numel %d", t.Numel())
			})
		}},
		{Name: ClassHugeSize + "/fromstorage-negative-size", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t, err := ivalue.FromStorage(ivalue.Float32, ivalue.NewStorage(64), 0, []int{-4, 4}, nil)
				return rejected(err, "FromStorage sizes [-4 4]: numel %d", numelOf(t))
			})
		}},
		{Name: ClassHugeSize + "/fromstorage-numel-overflow", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t, err := ivalue.FromStorage(ivalue.Float32, ivalue.NewStorage(64), 0, []int{1 << 32, 1 << 32, 64}, []int{0, 0, 1})
				return rejected(err, "FromStorage sizes [2^32 2^32 64] strides [0 0 1]: numel %d", numelOf(t))
			})
		}},
		{Name: ClassHugeSize + "/fromstorage-extent-overflow", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t, err := ivalue.FromStorage(ivalue.Float32, ivalue.NewStorage(64), 0, []int{2, 4}, []int{1 << 62, 1})
				return rejected(err, "FromStorage sizes [2 4] strides [2^62 1]: numel %d", numelOf(t))
			})
		}},
		{Name: ClassHugeSize + "/fromstorage-negative-offset", Class: ClassHugeSize, Run: func() error {
			return catchPanic(func() error {
				t, err := ivalue.FromStorage(ivalue.Float32, ivalue.NewStorage(64), -4, []int{4}, nil)
				return rejected(err, "FromStorage offset -4: numel %d", numelOf(t))
			})
		}},
		torchSaveCase("torchsave-numel-overflow", func(p *pk) { p.tensor("0", 16, 0, []int64{t32, t32, 16}, []int64{0, 0, 1}) }),
		torchSaveCase("torchsave-storage-numel-1e12", func(p *pk) { p.tensor("0", 1e12, 0, []int64{4}, []int64{1}) }),
		safetensorsCase("header-length-2^63", mustReject, func() []byte { return binary.LittleEndian.AppendUint64(nil, 1<<63) }),
		safetensorsCase("header-length-past-end", mustReject, func() []byte {
			return append(binary.LittleEndian.AppendUint64(nil, 1<<30), "{}"...)
		}),
		safetensorsCase("shape-numel-overflow", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[4294967296,4294967296,64],"data_offsets":[0,64]}}`, 64)),
		safetensorsCase("shape-negative", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[-4,-4],"data_offsets":[0,64]}}`, 64)),
		safetensorsCase("shape-2^63", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[9223372036854775807],"data_offsets":[0,64]}}`, 64)),
		safetensorsCase("offsets-past-end", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[4],"data_offsets":[0,9223372036854775807]}}`, 64)),
		safetensorsCase("offsets-reversed", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[0],"data_offsets":[64,0]}}`, 64)),
		safetensorsCase("offsets-negative", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[4],"data_offsets":[-16,0]}}`, 64)),
		safetensorsCase("shape-and-bytes-differ", mustReject, stHeader(`{"t":{"dtype":"F32","shape":[8],"data_offsets":[0,16]}}`, 64)),
		safetensorsCase("dtype-unknown", mustReject, stHeader(`{"t":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, 64)),
		safetensorsCase("json-nested-1M", mustReject, stHeader(`{"t":`+strings.Repeat("[", 1<<20)+`}`, 0)),
		safetensorsCase("rank-1M", either, stHeader(`{"t":{"dtype":"F32","shape":[`+strings.TrimSuffix(strings.Repeat("1,", 1<<20), ",")+`],"data_offsets":[0,4]}}`, 64)),
	}
}

func numelOf(t *ivalue.Tensor) int {
	if t == nil {
		return 0
	}
	return t.Numel()
}

func torchSaveCase(name string, value func(*pk)) Case {
	return Case{Name: ClassHugeSize + "/" + name, Class: ClassHugeSize, Run: func() error {
		p := newPK()
		value(p)
		v, err := loaders.ParseTorchSave("hostile.pt", saveArchive(p.bytes()))
		if err == nil && v.IsTensor() {
			return Wrongf("accepted a tensor of sizes %v strides %v (numel %d)", v.Tensor().Sizes(), v.Tensor().Strides(), v.Tensor().Numel())
		}
		return rejected(err, "%s", v.Kind())
	}}
}

// stHeader is a safetensors image: the header's length, the header, and
// body bytes of zeros.
func stHeader(header string, body int) func() []byte {
	return func() []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		return append(append(b, header...), make([]byte, body)...)
	}
}

func safetensorsCase(name string, e expect, build func() []byte) Case {
	return Case{Name: ClassHugeSize + "/safetensors-" + name, Class: ClassHugeSize, Run: func() error {
		tf, err := loaders.ParseSafetensors(build())
		if err != nil || e == either {
			return err
		}
		var desc []string
		for _, n := range tf.Names {
			t := tf.Tensors[n]
			desc = append(desc, fmt.Sprintf("%s of rank %d, numel %d", n, t.Dim(), t.Numel()))
		}
		return Wrongf("accepted: %s", strings.Join(desc, ", "))
	}}
}

// The campaign's zip bombs: entries that inflate a thousandfold, sizes
// declared unlike what the stream holds. A 1 MB archive must not take a
// gigabyte to refuse: each case runs under half of that.
func zipBombCases() []Case {
	const bombMem = 512 << 20
	nl := bytes.Repeat([]byte("\n"), 1<<20)
	zeros := make([]byte, 1<<20)
	c := func(name string, build func() []byte) Case {
		return archiveCase(ClassZipBomb, name, mustReject, bombMem, build)
	}
	code := []byte(moduleHead + "    return torch.relu(x)\n")
	withBomb := func(name string, bomb gen.Entry, rest ...gen.Entry) []byte {
		bomb.Name = name
		es := []gen.Entry{
			{Name: "data.pkl", Data: moduleData()},
			{Name: "code/__torch__.py", Data: code, Deflate: true},
			{Name: "version", Data: []byte("3\n")},
		}
		for i, e := range es {
			if e.Name == name {
				es[i] = bomb
			}
		}
		return gen.BuildArchive("m", append(es, rest...)...)
	}
	return []Case{
		// The campaign's: code that inflates to 1 GiB from a 1.1 MB file.
		c("code-1GiB", func() []byte { return withBomb("code/__torch__.py", gen.Bomb(code, nl, 1024)) }),
		c("code-1GiB-one-comment", func() []byte {
			return withBomb("code/__torch__.py", gen.Bomb(append(bytes.Clone(code), '#'), bytes.Repeat([]byte("x"), 1<<20), 1024))
		}),
		c("data-pkl-1GiB", func() []byte { return withBomb("data.pkl", gen.Bomb(moduleData(), zeros, 1024)) }),
		c("version-1GiB", func() []byte { return withBomb("version", gen.Bomb([]byte("3\n"), nl, 1024)) }),
		c("constants-pkl-1GiB", func() []byte {
			b := gen.Bomb(constantsOf(c0), zeros, 1024)
			b.Name = "constants.pkl"
			return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n", b, gen.Entry{Name: "constants/0", Data: make([]byte, 64)})
		}),
		// 1 GiB of weights in 1 MB: only a ratio limit refuses it before
		// inflating it.
		c("storage-1GiB", func() []byte {
			b := gen.Bomb(nil, zeros, 1024)
			b.Name = "constants/0"
			return scriptArchive("    return torch.add(x, torch.sum(CONSTANTS.c0))\n",
				gen.Entry{Name: "constants.pkl", Data: constantsOf(func(p *pk) { p.tensor("0", 1<<28, 0, []int64{1 << 28}, []int64{1}) })}, b)
		}),
		c("code-declared-1KiB-inflates-1GiB", func() []byte {
			b := gen.Bomb(code, nl, 1024)
			b.Size = 1024
			return withBomb("code/__torch__.py", b)
		}),
		c("code-declared-16GiB", func() []byte {
			b := gen.Bomb(code, nil, 0)
			b.Size = 16 << 30
			return withBomb("code/__torch__.py", b)
		}),
		c("code-declared-2^62", func() []byte {
			b := gen.Bomb(code, nil, 0)
			b.Size = 1 << 62
			return withBomb("code/__torch__.py", b)
		}),
		c("code-declared-bigger-than-stream", func() []byte {
			b := gen.Bomb(code, nil, 0)
			b.Size = uint64(len(code)) + 1<<20
			return withBomb("code/__torch__.py", b)
		}),
		// Overlapping entries: data.pkl's directory record points at the
		// code's bytes.
		c("overlap-data-pkl-on-code", func() []byte {
			z := scriptArchive("    return torch.relu(x)\n")
			offs, names := gen.CentralEntries(z)
			var codeOff uint32
			for i, n := range names {
				if strings.HasSuffix(n, "code/__torch__.py") {
					codeOff = gen.U32(z, offs[i]+gen.CenLocalOff)
				}
			}
			return gen.EditCentral(z, "data.pkl", func(rec []byte) { gen.PutU32(rec, gen.CenLocalOff, codeOff) })
		}),
		// A valid model among 100,000 other records: legal; run right or
		// refused by a limit.
		archiveCase(ClassZipBomb, "entries-100k", either, bombMem, func() []byte {
			return gen.BuildArchive("m", append([]gen.Entry{
				{Name: "data.pkl", Data: moduleData()},
				{Name: "code/__torch__.py", Data: []byte(moduleHead + "    return x\n"), Deflate: true},
			}, gen.ManyEntries(100_000)...)...)
		}),
	}
}

// Malformed archives: truncated, corrupt, lying directories.
func badArchiveCases() []Case {
	good := func() []byte { return constArchive(constantsOf(c0)) }
	c := func(name string, e expect, build func() []byte) Case {
		return archiveCase(ClassBadArchive, name, e, 0, build)
	}
	cut := func(frac float64) func() []byte {
		return func() []byte { z := good(); return z[:int(float64(len(z))*frac)] }
	}
	var cs []Case
	cs = append(cs, c("baseline", mustRun, good))
	for _, f := range []float64{0.1, 0.5, 0.9, 0.99} {
		cs = append(cs, c(fmt.Sprintf("truncated-%g%%", f*100), mustReject, cut(f)))
	}
	cs = append(cs,
		c("truncated-last-byte", mustReject, func() []byte { z := good(); return z[:len(z)-1] }),
		c("truncated-to-gen.EOCD", mustReject, func() []byte { z := good(); return z[gen.EOCD(z):] }),
		c("empty-file", mustReject, func() []byte { return nil }),
		c("not-a-zip", mustReject, func() []byte { return []byte("this is not an archive") }),
		c("legacy-torch-save", mustReject, func() []byte {
			return []byte{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'}
		}),
		c("no-entries", mustReject, func() []byte { return gen.BuildArchive("m") }),
		c("no-folder", mustReject, func() []byte {
			z := good()
			return bytes.ReplaceAll(z, []byte("m/"), []byte("//"))
		}),
		c("random-with-gen.EOCD", mustReject, func() []byte {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(i * 2654435761 >> 13)
			}
			end := make([]byte, 22)
			binary.LittleEndian.PutUint32(end, gen.SigEnd)
			gen.PutU16(end, 8, 3)
			gen.PutU16(end, 10, 3)
			gen.PutU32(end, 12, 1000)
			gen.PutU32(end, 16, 5000)
			return append(b, end...)
		}),
		c("crc-bad-code", mustReject, func() []byte {
			return gen.EditCentral(good(), "code/__torch__.py", func(rec []byte) { gen.PutU32(rec, gen.CenCRC, gen.U32(rec, gen.CenCRC)^1) })
		}),
		// Stored records are not checksummed on load (Verify does): the
		// model either loads and runs right, or is refused.
		c("crc-bad-data-pkl", either, func() []byte {
			return gen.EditCentral(good(), "data.pkl", func(rec []byte) { gen.PutU32(rec, gen.CenCRC, gen.U32(rec, gen.CenCRC)^1) })
		}),
		c("crc-bad-storage", either, func() []byte {
			return gen.EditCentral(good(), "constants/0", func(rec []byte) { gen.PutU32(rec, gen.CenCRC, gen.U32(rec, gen.CenCRC)^1) })
		}),
		c("gen.EOCD-65535-entries", mustReject, func() []byte {
			return gen.EditEnd(good(), func(end []byte) { gen.PutU16(end, 8, 0xffff); gen.PutU16(end, 10, 0xffff) })
		}),
		c("gen.EOCD-directory-offset-past-end", mustReject, func() []byte {
			return gen.EditEnd(good(), func(end []byte) { gen.PutU32(end, 16, 0x7fffffff) })
		}),
		c("gen.EOCD-directory-size-4GiB", mustReject, func() []byte {
			return gen.EditEnd(good(), func(end []byte) { gen.PutU32(end, 12, 0xffffffff) })
		}),
		c("local-offset-past-end", mustReject, func() []byte {
			return gen.EditCentral(good(), "data.pkl", func(rec []byte) { gen.PutU32(rec, gen.CenLocalOff, 0x7fffffff) })
		}),
		c("storage-local-offset-past-end", mustReject, func() []byte {
			return gen.EditCentral(good(), "constants/0", func(rec []byte) { gen.PutU32(rec, gen.CenLocalOff, 0x7fffffff) })
		}),
		c("stored-sizes-differ", mustReject, func() []byte {
			return gen.EditCentral(good(), "constants/0", func(rec []byte) { gen.PutU32(rec, gen.CenSize, 1<<30) })
		}),
		c("stored-size-4GiB", mustReject, func() []byte {
			return gen.EditCentral(good(), "constants/0", func(rec []byte) {
				gen.PutU32(rec, gen.CenSize, 0xfffffffe)
				gen.PutU32(rec, gen.CenCompSize, 0xfffffffe)
			})
		}),
		c("method-bzip2", mustReject, func() []byte {
			return gen.EditCentral(good(), "data.pkl", func(rec []byte) { gen.PutU16(rec, 10, 12) })
		}),
		c("method-unknown", mustReject, func() []byte {
			return gen.EditCentral(good(), "code/__torch__.py", func(rec []byte) { gen.PutU16(rec, 10, 99) })
		}),
		c("duplicate-entry", mustReject, func() []byte {
			return scriptArchive("    return x\n", gen.Entry{Name: "data.pkl", Data: moduleData()})
		}),
		c("missing-data-pkl", mustReject, func() []byte {
			return gen.BuildArchive("m", gen.Entry{Name: "code/__torch__.py", Data: []byte(moduleHead + "    return x\n")})
		}),
		c("missing-code", mustReject, func() []byte { return gen.BuildArchive("m", gen.Entry{Name: "data.pkl", Data: moduleData()}) }),
		c("missing-storage", mustReject, func() []byte {
			return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n", gen.Entry{Name: "constants.pkl", Data: constantsOf(c0)})
		}),
		c("short-storage", mustReject, func() []byte {
			return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n",
				gen.Entry{Name: "constants.pkl", Data: constantsOf(c0)}, gen.Entry{Name: "constants/0", Data: make([]byte, 15)})
		}),
		c("storage-misaligned", mustRun, func() []byte {
			// One byte of padding before the storage: its floats are not
			// 4-byte aligned in the file.
			return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n",
				gen.Entry{Name: "constants.pkl", Data: constantsOf(c0)}, gen.Entry{Name: "p", Data: []byte{1}}, gen.Entry{Name: "constants/0", Data: make([]byte, 64)})
		}),
		c("entry-name-traversal", either, func() []byte {
			return scriptArchive("    return x\n", gen.Entry{Name: "../../../../tmp/gosr-hostile-x", Data: []byte("x")})
		}),
		c("code-not-utf8", mustReject, func() []byte { return scriptArchive("    return \xff\xfe(x)\n") }),
		c("code-nul-bytes", mustReject, func() []byte { return scriptArchive("    return torch.relu(x\x00\x00)\n") }),
		c("code-tabs-and-cr", either, func() []byte { return scriptArchive("    return torch.relu(x)\r\n\t\r\n") }),
	)
	return cs
}
