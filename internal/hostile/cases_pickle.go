package hostile

import (
	"bytes"
	"encoding/binary"
	"github.com/gosr/gosr/internal/hostile/gen"
	"math/big"
	"slices"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/loaders/pickle"
)

// pk writes pickle bytes by opcode: enough to build PyTorch's records and
// hostile variants of them by hand. (A private minimal writer; the
// generators of gen_pickle.go can replace it.)
type pk struct{ b []byte }

func newPK() *pk { return &pk{b: []byte{0x80, 2}} }

func (p *pk) op(ops ...byte) *pk { p.b = append(p.b, ops...); return p }

func (p *pk) raw(b []byte) *pk { p.b = append(p.b, b...); return p }

func (p *pk) global(module, name string) *pk {
	p.b = append(p.b, 'c')
	p.b = append(p.b, module+"\n"+name+"\n"...)
	return p
}

func (p *pk) str(s string) *pk {
	p.b = append(p.b, 'X')
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	p.b = append(p.b, s...)
	return p
}

// int writes BININT for what fits in 32 bits, else LONG1.
func (p *pk) int(n int64) *pk {
	if n == int64(int32(n)) {
		p.b = append(p.b, 'J')
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(n))
		return p
	}
	return p.bigInt(big.NewInt(n))
}

// bigInt writes LONG1: two's complement, little-endian.
func (p *pk) bigInt(n *big.Int) *pk {
	var mag []byte
	if n.Sign() >= 0 {
		mag = n.Bytes()
		if len(mag) == 0 || mag[0]&0x80 != 0 {
			mag = append([]byte{0}, mag...)
		}
	} else {
		// two's complement of |n| in enough bytes
		k := (n.BitLen() + 8) / 8
		m := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*k)), n)
		mag = m.FillBytes(make([]byte, k))
	}
	le := slices.Clone(mag)
	slices.Reverse(le)
	p.b = append(p.b, 0x8a, byte(len(le)))
	p.b = append(p.b, le...)
	return p
}

func (p *pk) ints(ns ...int64) *pk {
	p.op('(')
	for _, n := range ns {
		p.int(n)
	}
	return p.op('t')
}

func (p *pk) bytes() []byte { return append(p.op('.').b[:0:0], p.b...) }

// Opcodes used by name below.
const (
	pkMark       = '('
	pkTuple      = 't'
	pkTuple1     = 0x85
	pkEmptyTuple = ')'
	pkEmptyList  = ']'
	pkEmptyDict  = '}'
	pkAppend     = 'a'
	pkSetItem    = 's'
	pkSetItems   = 'u'
	pkBinPersID  = 'Q'
	pkReduce     = 'R'
	pkBuild      = 'b'
	pkNewObj     = 0x81
	pkNewFalse   = 0x89
	pkNone       = 'N'
	pkPop        = '0'
	pkDup        = '2'
	pkBinPut     = 'q'
	pkBinGet     = 'h'
	pkMemoize    = 0x94
	pkStop       = '.'
)

// pkDeepTuple is a tuple nested n deep: ((((),),),) as EMPTY_TUPLE and n
// TUPLE1s, one byte a level.
func pkDeepTuple(n int) []byte {
	b := make([]byte, 1+n)
	b[0] = pkEmptyTuple
	for i := 1; i <= n; i++ {
		b[i] = pkTuple1
	}
	return b
}

// pkDeepList is a list nested n deep, made inside out through memo 0 (the
// level below is kept there, not on the stack): seven bytes a level, no
// marks.
func pkDeepList(n int) []byte {
	b := []byte{pkEmptyList, pkBinPut, 0, pkPop}
	for range n {
		b = append(b, pkEmptyList, pkBinGet, 0, pkAppend, pkBinPut, 0, pkPop)
	}
	return append(b, pkBinGet, 0)
}

// pkDeepDict is a dict nested n deep ({1: {1: ...}}), inside out like pkDeepList.
func pkDeepDict(n int) []byte {
	b := []byte{pkEmptyDict, pkBinPut, 0, pkPop}
	for range n {
		b = append(b, pkEmptyDict, 'K', 1, pkBinGet, 0, pkSetItem, pkBinPut, 0, pkPop)
	}
	return append(b, pkBinGet, 0)
}

// persid is a storage's persistent id ('storage', torch.<cls>, key, 'cpu',
// numel), loaded: what a tensor's first argument is in PyTorch's records.
func (p *pk) persid(cls, key string, numel int64) *pk {
	p.op(pkMark).str("storage").global("torch", cls).str(key).str("cpu").int(numel).op(pkTuple, pkBinPersID)
	return p
}

// rebuild writes torch._utils._rebuild_tensor_v2(storage, offset, size,
// stride, False, OrderedDict()) with each argument written by its func.
func (p *pk) rebuild(storage, offset, size, stride func(*pk)) *pk {
	p.global("torch._utils", "_rebuild_tensor_v2").op(pkMark)
	storage(p)
	offset(p)
	size(p)
	stride(p)
	p.op(pkNewFalse).global("collections", "OrderedDict").op(pkEmptyTuple, pkReduce, pkTuple, pkReduce)
	return p
}

// tensor writes rebuild with the usual arguments: a float storage key
// of numel elements, a view of sizes and strides at offset.
func (p *pk) tensor(key string, numel int64, offset int64, sizes, strides []int64) *pk {
	return p.rebuild(
		func(p *pk) { p.persid("FloatStorage", key, numel) },
		func(p *pk) { p.int(offset) },
		func(p *pk) { p.ints(sizes...) },
		func(p *pk) { p.ints(strides...) })
}

// moduleData is data.pkl of a frozen module of class __torch__.M: an object
// with no attributes.
func moduleData() []byte {
	return newPK().global("__torch__", "M").op(pkEmptyTuple, pkNewObj, pkEmptyDict, pkMark, pkSetItems, pkBuild).bytes()
}

// constantsOf is constants.pkl: a tuple of what each func writes.
func constantsOf(items ...func(*pk)) []byte {
	p := newPK().op(pkMark)
	for _, it := range items {
		it(p)
	}
	return p.op(pkTuple).bytes()
}

// moduleWith is data.pkl of module M with one attribute, name, whose value
// value writes.
func moduleWith(name string, value func(*pk)) []byte {
	p := newPK().global("__torch__", "M").op(pkEmptyTuple, pkNewObj, pkEmptyDict, pkMark).str(name)
	value(p)
	return p.op(pkSetItems, pkBuild).bytes()
}

// constArchive is module M whose forward adds CONSTANTS.c0 to x, with the
// constants.pkl given (deflated, so that a pickle megabytes long is a file
// of kilobytes, as in the campaign) and a 16-float storage constants/0.
func constArchive(constants []byte) []byte {
	return scriptArchive("    return torch.add(x, CONSTANTS.c0)\n",
		gen.Entry{Name: "constants.pkl", Data: constants, Deflate: true},
		gen.Entry{Name: "constants/0", Data: make([]byte, 64)})
}

// dataArchive is module M (forward: relu) with the data.pkl given.
func dataArchive(data []byte) []byte {
	return gen.BuildArchive("m",
		gen.Entry{Name: "data.pkl", Data: data, Deflate: true},
		gen.Entry{Name: "code/__torch__.py", Data: []byte(moduleHead + "    return torch.relu(x)\n"), Deflate: true},
		gen.Entry{Name: "version", Data: []byte("3\n")})
}

// saveArchive is a torch.save file whose data.pkl is given, with a
// 16-float storage data/0.
func saveArchive(data []byte) []byte {
	return gen.BuildArchive("archive",
		gen.Entry{Name: "data.pkl", Data: data, Deflate: true},
		gen.Entry{Name: "data/0", Data: make([]byte, 64)},
		gen.Entry{Name: "version", Data: []byte("3\n")})
}

// c0 is constants.pkl's usual tensor: [1, 4] over storage "0".
func c0(p *pk) { p.tensor("0", 16, 0, []int64{1, 4}, []int64{4, 1}) }

func pkRaw(b []byte) func(*pk) { return func(p *pk) { p.raw(b) } }

// pkTupleDAG is a tuple n levels deep in which each level holds the level
// below twice: 2n opcodes, 2^n leaves for anything that walks it as a tree.
func pkTupleDAG(n int) []byte {
	b := []byte{pkEmptyTuple}
	for range n {
		b = append(b, pkBinPut, 0, pkBinGet, 0, 0x86) // TUPLE2 of (t, t)
	}
	return b
}

// pkListDAG is pkTupleDAG with lists (reference types: converted once each).
func pkListDAG(n int) []byte {
	b := []byte{pkEmptyList}
	for range n {
		b = append(b, pkBinPut, 0, pkEmptyList, pkBinGet, 0, pkAppend, pkBinGet, 0, pkAppend)
	}
	return b
}

// pkRepeat is n copies of ops.
func pkRepeat(n int, ops ...byte) []byte { return bytes.Repeat(ops, n) }

func pickleCase(name string, e expect, memory int64, build func() []byte, run func([]byte) ([]ivalue.IValue, error)) Case {
	return Case{Name: ClassDeepPickle + "/" + name, Class: ClassDeepPickle, Memory: memory, Run: func() error {
		outs, err := run(build())
		return judge(e, outs, err, func(outs []ivalue.IValue) error {
			if e == mustRun {
				return expectTensor(outs, x4())
			}
			return nil
		}, "%s", name)
	}}
}

func runArchive(a []byte) ([]ivalue.IValue, error) { return loadAndRun(a, ivalue.FromTensor(x4())) }

func runSave(a []byte) ([]ivalue.IValue, error) {
	v, err := loaders.ParseTorchSave("hostile.pt", a)
	return []ivalue.IValue{v}, err
}

// runUnpickle is pickle.Unpickle with no globals: plain data.
func runUnpickle(b []byte) ([]ivalue.IValue, error) {
	_, err := pickle.Unpickle(b, &pickle.Options{Name: "hostile.pkl"})
	return nil, err
}

// Deep pickles: values nested millions deep where PyTorch's records put a
// persistent id, a size, an offset, an argument; memo, stack and list
// bombs; DAGs that are small as pickles and exponential as trees; lengths
// declared far past the end.
func deepPickleCases() []Case {
	const bomb = 1 << 24 // the unpickler's memo and stack limits
	const bombMem = 512 << 20
	deepT := func() []byte { return pkDeepTuple(deep) }
	deepest := func() []byte { return pkDeepTuple(campaignDeep) }
	cons := func(items ...func(*pk)) func() []byte {
		return func() []byte { return constArchive(constantsOf(items...)) }
	}
	tensorWith := func(storage, offset, size, stride func(*pk)) func(*pk) {
		return func(p *pk) { p.rebuild(storage, offset, size, stride) }
	}
	persid := func(p *pk) { p.persid("FloatStorage", "0", 16) }
	off0 := func(p *pk) { p.int(0) }
	size14 := func(p *pk) { p.ints(1, 4) }
	stride41 := func(p *pk) { p.ints(4, 1) }
	deepIn := func(before func(*pk), after func(*pk)) func(*pk) {
		return func(p *pk) {
			p.op(pkMark)
			before(p)
			p.raw(deepT())
			after(p)
			p.op(pkTuple)
		}
	}
	nothing := func(*pk) {}
	attr := func(value func(*pk)) func() []byte {
		return func() []byte { return dataArchive(moduleWith("a", value)) }
	}
	plain := func(b func() []byte) func() []byte {
		return func() []byte { return append(append([]byte{0x80, 2}, b()...), pkStop) }
	}
	return []Case{
		pickleCase("baseline-constant", mustRun, 0, cons(c0), runArchive),
		// The campaign's: a 29 KB file.
		pickleCase("persid-deep-tuple-3M", mustReject, 0, cons(tensorWith(
			func(p *pk) { p.raw(deepest()).op(pkBinPersID) }, off0, size14, stride41)), runArchive),
		pickleCase("persid-deep-tuple", mustReject, 0, cons(tensorWith(
			func(p *pk) { p.raw(deepT()).op(pkBinPersID) }, off0, size14, stride41)), runArchive),
		pickleCase("persid-deep-numel", mustReject, 0, cons(tensorWith(func(p *pk) {
			p.op(pkMark).str("storage").global("torch", "FloatStorage").str("0").str("cpu").raw(deepT()).op(pkTuple, pkBinPersID)
		}, off0, size14, stride41)), runArchive),
		pickleCase("persid-deep-kind", mustReject, 0, cons(tensorWith(func(p *pk) {
			p.op(pkMark).raw(deepT()).global("torch", "FloatStorage").str("0").str("cpu").int(16).op(pkTuple, pkBinPersID)
		}, off0, size14, stride41)), runArchive),
		pickleCase("persid-deep-key", mustReject, 0, cons(tensorWith(func(p *pk) {
			p.op(pkMark).str("storage").global("torch", "FloatStorage").raw(deepT()).str("cpu").int(16).op(pkTuple, pkBinPersID)
		}, off0, size14, stride41)), runArchive),
		pickleCase("persid-deep-dtype", mustReject, 0, cons(tensorWith(func(p *pk) {
			p.op(pkMark).str("storage").raw(deepT()).str("0").str("cpu").int(16).op(pkTuple, pkBinPersID)
		}, off0, size14, stride41)), runArchive),
		pickleCase("persid-tuple-dag-64", mustReject, 0, cons(tensorWith(
			func(p *pk) { p.raw(pkTupleDAG(64)).op(pkBinPersID) }, off0, size14, stride41)), runArchive),
		pickleCase("tensor-size-deep-item", mustReject, 0, cons(tensorWith(persid, off0, deepIn(func(p *pk) { p.int(1) }, nothing), stride41)), runArchive),
		pickleCase("tensor-stride-deep-item", mustReject, 0, cons(tensorWith(persid, off0, size14, deepIn(func(p *pk) { p.int(4) }, nothing))), runArchive),
		pickleCase("tensor-size-deep", mustReject, 0, cons(tensorWith(persid, off0, pkRaw(pkDeepTuple(deep)), stride41)), runArchive),
		pickleCase("tensor-offset-deep", mustReject, 0, cons(tensorWith(persid, pkRaw(pkDeepTuple(deep)), size14, stride41)), runArchive),
		pickleCase("tensor-size-tuple-dag-64", mustReject, 0, cons(tensorWith(persid, off0, func(p *pk) { p.op(pkMark).raw(pkTupleDAG(64)).op(pkTuple) }, stride41)), runArchive),
		pickleCase("tensor-args-deep", mustReject, 0, cons(func(p *pk) {
			p.global("torch._utils", "_rebuild_tensor_v2").raw(deepT()).op(pkReduce)
		}), runArchive),
		pickleCase("bytearray-deep-item", mustReject, 0, attr(func(p *pk) {
			p.global("builtins", "bytearray").op(pkMark).raw(deepT()).op(pkTuple1, pkTuple, pkReduce)
		}), runArchive),
		pickleCase("bytearray-deep", mustReject, 0, attr(func(p *pk) {
			p.global("builtins", "bytearray").op(pkMark).raw(deepT()).op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("codecs-encode-deep", mustReject, 0, attr(func(p *pk) {
			p.global("_codecs", "encode").op(pkMark).raw(deepT()).str("latin1").op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("set-of-deep", mustReject, 0, attr(func(p *pk) {
			p.global("builtins", "set").op(pkMark, pkEmptyList).raw(deepT()).op(pkAppend, pkTuple, pkReduce)
		}), runArchive),
		pickleCase("dict-deep-key", mustReject, 0, attr(func(p *pk) {
			p.op(pkEmptyDict).raw(deepT()).int(1).op(pkSetItem)
		}), runArchive),
		pickleCase("dict-two-deep-keys", mustReject, 0, attr(func(p *pk) {
			p.op(pkEmptyDict).raw(deepT()).int(1).op(pkSetItem).raw(deepT()).int(2).op(pkSetItem)
		}), runArchive),
		pickleCase("dict-key-tuple-dag-64", mustReject, 0, attr(func(p *pk) {
			p.op(pkEmptyDict).raw(pkTupleDAG(64)).int(1).op(pkSetItem)
		}), runArchive),
		pickleCase("device-deep", mustReject, 0, attr(func(p *pk) {
			p.global("torch", "device").op(pkMark).raw(deepT()).op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("ordered-dict-deep-args", mustReject, 0, attr(func(p *pk) {
			p.global("collections", "OrderedDict").raw(deepT()).op(pkReduce)
		}), runArchive),
		pickleCase("unknown-global-deep-args", mustReject, 0, attr(func(p *pk) {
			p.global("os", "system").raw(deepT()).op(pkReduce)
		}), runArchive),
		pickleCase("attr-deep-tuple", mustReject, 0, attr(pkRaw(pkDeepTuple(deep))), runArchive),
		pickleCase("attr-deep-list", mustReject, 0, attr(func(p *pk) { p.raw(pkDeepList(deep)) }), runArchive),
		pickleCase("attr-deep-dict", mustReject, 0, attr(func(p *pk) { p.raw(pkDeepDict(deep)) }), runArchive),
		pickleCase("attr-tuple-dag-64", mustReject, 0, attr(func(p *pk) { p.raw(pkTupleDAG(64)) }), runArchive),
		pickleCase("attr-list-dag-64", either, 0, attr(func(p *pk) { p.raw(pkListDAG(64)) }), runArchive),
		pickleCase("build-state-deep", mustReject, 0, func() []byte {
			return dataArchive(newPK().global("__torch__", "M").op(pkEmptyTuple, pkNewObj).raw(deepT()).op(pkBuild).bytes())
		}, runArchive),
		pickleCase("data-root-deep", mustReject, 0, func() []byte { return dataArchive(plain(deepT)()) }, runArchive),
		pickleCase("constants-deep", mustReject, 0, func() []byte { return constArchive(plain(deepT)()) }, runArchive),
		pickleCase("torchsave-deep", mustReject, 0, func() []byte { return saveArchive(plain(deepT)()) }, runSave),
		pickleCase("torchsave-persid-deep", mustReject, 0, func() []byte {
			return saveArchive(newPK().rebuild(func(p *pk) { p.raw(deepT()).op(pkBinPersID) }, off0, size14, stride41).bytes())
		}, runSave),
		pickleCase("torchsave-size-deep-item", mustReject, 0, func() []byte {
			return saveArchive(newPK().rebuild(persid, off0, deepIn(func(p *pk) { p.int(1) }, nothing), stride41).bytes())
		}, runSave),
		pickleCase("torchsave-tuple-dag-64", mustReject, 0, func() []byte { return saveArchive(plain(func() []byte { return pkTupleDAG(64) })()) }, runSave),
		pickleCase("unpickle-deep-tuple", either, 0, plain(deepT), runUnpickle),
		pickleCase("unpickle-deep-list", either, 0, plain(func() []byte { return pkDeepList(deep) }), runUnpickle),
		// Bombs: a few bytes an item, deflated to kilobytes in an archive.
		pickleCase("memo-bomb", mustReject, bombMem, func() []byte {
			return dataArchive(plain(func() []byte { return pkRepeat(bomb+1, pkNone, pkMemoize, pkPop) })())
		}, runArchive),
		pickleCase("memo-bomb-binput", mustReject, bombMem, func() []byte {
			b := make([]byte, 0, 7*(bomb+1))
			for i := range bomb + 1 {
				b = append(b, pkNone, 'r', byte(i), byte(i>>8), byte(i>>16), byte(i>>24), pkPop)
			}
			return dataArchive(plain(func() []byte { return b })())
		}, runArchive),
		pickleCase("stack-bomb", mustReject, bombMem, func() []byte {
			return dataArchive(plain(func() []byte { return pkRepeat(bomb+1, pkNone) })())
		}, runArchive),
		pickleCase("dup-bomb", mustReject, bombMem, func() []byte {
			return dataArchive(plain(func() []byte { return append([]byte{pkNone}, pkRepeat(bomb+1, pkDup)...) })())
		}, runArchive),
		pickleCase("list-bomb", mustReject, bombMem, func() []byte {
			return dataArchive(plain(func() []byte { return append([]byte{pkEmptyList}, pkRepeat(bomb+1, pkNone, pkAppend)...) })())
		}, runArchive),
		pickleCase("dict-bomb", mustReject, bombMem, func() []byte {
			b := []byte{pkEmptyDict}
			for i := range bomb / 4 {
				b = append(b, 'J', byte(i), byte(i>>8), byte(i>>16), byte(i>>24), pkNone, pkSetItem)
			}
			return dataArchive(plain(func() []byte { return b })())
		}, runArchive),
		pickleCase("marks-bomb", mustReject, bombMem, func() []byte {
			return dataArchive(plain(func() []byte { return pkRepeat(bomb, pkMark) })())
		}, runArchive),
		pickleCase("string-memo-dup", mustReject, bombMem, func() []byte {
			// One 1 MiB string referenced 16M times: 16 TB if copied.
			p := newPK().str(string(make([]byte, 1<<20))).op(pkMemoize, pkEmptyList)
			p.raw(pkRepeat(bomb, pkBinGet, 0, pkAppend))
			return dataArchive(p.bytes())
		}, runArchive),
		// Lengths declared past the end.
		pickleCase("binunicode-4GiB-declared", mustReject, 0, plain(func() []byte { return []byte{'X', 0xff, 0xff, 0xff, 0xff, 'a'} }), runUnpickle),
		pickleCase("binunicode8-2^62-declared", mustReject, 0, plain(func() []byte { return []byte{0x8d, 0, 0, 0, 0, 0, 0, 0, 0x40, 'a'} }), runUnpickle),
		pickleCase("binbytes8-2^63-declared", mustReject, 0, plain(func() []byte { return []byte{0x8e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 'a'} }), runUnpickle),
		pickleCase("long4-2GiB-declared", mustReject, 0, plain(func() []byte { return []byte{0x8b, 0xff, 0xff, 0xff, 0x7f, 1} }), runUnpickle),
		pickleCase("frame-2^62-declared", mustReject, 0, func() []byte {
			return []byte{0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0x40, pkNone, pkStop}
		}, runUnpickle),
		pickleCase("bytearray8-2^62-declared", mustReject, 0, func() []byte {
			return []byte{0x80, 5, 0x96, 0, 0, 0, 0, 0, 0, 0, 0x40, pkStop}
		}, runUnpickle),
		pickleCase("long-binget-4G-index", mustReject, 0, plain(func() []byte { return []byte{'j', 0xff, 0xff, 0xff, 0xff} }), runUnpickle),
		// Numbers as text, megabytes long: Python limits int parsing to
		// 4300 digits because big-number conversion is quadratic.
		pickleCase("int-text-1M-digits", either, 0, func() []byte {
			return dataArchive(moduleWith("a", func(p *pk) { p.op('I').raw(bytes.Repeat([]byte("9"), 1<<20)).op('\n') }))
		}, runArchive),
		pickleCase("long-text-1M-digits", either, 0, func() []byte {
			return dataArchive(moduleWith("a", func(p *pk) { p.op('L').raw(bytes.Repeat([]byte("9"), 1<<20)).raw([]byte("L\n")) }))
		}, runArchive),
		pickleCase("long1-255-bytes", either, 0, func() []byte {
			return dataArchive(moduleWith("a", func(p *pk) { p.bigInt(new(big.Int).Lsh(big.NewInt(1), 2030)) }))
		}, runArchive),
		pickleCase("float-text-1M-digits", either, 0, func() []byte {
			return dataArchive(moduleWith("a", func(p *pk) { p.op('F').raw([]byte("1.")).raw(bytes.Repeat([]byte("1"), 1<<20)).op('\n') }))
		}, runArchive),
		// Globals that would run code are refused, whatever their arguments.
		pickleCase("global-os-system", mustReject, 0, attr(func(p *pk) {
			p.global("os", "system").op(pkMark).str("touch /tmp/gosr-hostile-pwned").op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("global-builtins-eval", mustReject, 0, attr(func(p *pk) {
			p.global("builtins", "eval").op(pkMark).str("1").op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("global-stack-global-getattr", mustReject, 0, attr(func(p *pk) {
			p.str("builtins").str("getattr").op(0x93).op(pkMark).str("x").str("y").op(pkTuple, pkReduce)
		}), runArchive),
		pickleCase("reduce-non-callable", mustReject, 0, attr(func(p *pk) { p.int(1).op(pkEmptyTuple, pkReduce) }), runArchive),
	}
}
