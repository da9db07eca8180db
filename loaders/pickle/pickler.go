package pickle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
)

// Reduce is written as Callable, Args, REDUCE: the object Python gets by
// calling Callable(*Args) (Callable is usually a Global).
type Reduce struct {
	Callable any
	Args     Tuple
}

// PersistentID is written as its ID followed by BINPERSID: the
// unpickler's persistent_load(ID) stands in its place.
type PersistentID struct {
	ID any
}

// batch is the number of items per APPENDS/SETITEMS, as Python's pickler.
const batch = 1000

// Encoder writes protocol 2 pickles, as Python's pickle.Pickler(f, 2):
// shared *List, *Dict, *Set and *Reduce values are written once and then
// referenced through the memo, as are repeated Globals.
type Encoder struct {
	w    *bufio.Writer
	memo map[any]int
	err  error
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: bufio.NewWriter(w)} }

// Marshal returns the protocol 2 pickle of v.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Encode writes one complete pickle of v (PROTO 2 ... STOP). The memo
// starts empty for each call. Values: nil, bool, int, int64, *big.Int,
// float64, string, []byte, Tuple, *List, *Dict, *Set, Global, Reduce,
// *Reduce, PersistentID.
func (e *Encoder) Encode(v any) error {
	e.memo = map[any]int{}
	e.err = nil
	e.w.Write([]byte{opPROTO, 2})
	if err := e.value(v); err != nil {
		return err
	}
	e.w.WriteByte(opSTOP)
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

func (e *Encoder) op(b ...byte) { e.w.Write(b) }

// memoize records the object just written under the next memo index.
func (e *Encoder) memoize(key any) {
	i := len(e.memo)
	e.memo[key] = i
	if i < 256 {
		e.op(opBINPUT, byte(i))
		return
	}
	var b [5]byte
	b[0] = opLONG_BINPUT
	binary.LittleEndian.PutUint32(b[1:], uint32(i))
	e.op(b[:]...)
}

// fromMemo writes a reference to key if it was written before.
func (e *Encoder) fromMemo(key any) bool {
	i, ok := e.memo[key]
	if !ok {
		return false
	}
	if i < 256 {
		e.op(opBINGET, byte(i))
	} else {
		var b [5]byte
		b[0] = opLONG_BINGET
		binary.LittleEndian.PutUint32(b[1:], uint32(i))
		e.op(b[:]...)
	}
	return true
}

func (e *Encoder) value(v any) error {
	switch x := v.(type) {
	case nil:
		e.op(opNONE)
	case bool:
		if x {
			e.op(opNEWTRUE)
		} else {
			e.op(opNEWFALSE)
		}
	case int:
		e.int(int64(x))
	case int64:
		e.int(x)
	case *big.Int:
		if x.IsInt64() {
			e.int(x.Int64())
		} else {
			e.long(x)
		}
	case float64:
		var b [9]byte
		b[0] = opBINFLOAT
		binary.BigEndian.PutUint64(b[1:], math.Float64bits(x))
		e.op(b[:]...)
	case string:
		e.str(x)
	case []byte:
		// Protocol 2 has no bytes opcode: Python writes
		// _codecs.encode(latin1_text, 'latin1').
		r := make([]rune, len(x))
		for i, c := range x {
			r[i] = rune(c)
		}
		return e.value(&Reduce{Global{"_codecs", "encode"}, Tuple{string(r), "latin1"}})
	case Tuple:
		return e.tuple(x)
	case *List:
		return e.list(x)
	case *Dict:
		return e.dict(x)
	case *Set:
		if e.fromMemo(x) {
			return nil
		}
		items := &List{Items: x.Items}
		g := Global{"builtins", "set"}
		if x.Frozen {
			g.Name = "frozenset"
		}
		if err := e.value(g); err != nil {
			return err
		}
		if err := e.tuple(Tuple{items}); err != nil {
			return err
		}
		e.op(opREDUCE)
		e.memoize(x)
	case Global:
		if e.fromMemo(x) {
			return nil
		}
		e.op(opGLOBAL)
		e.w.WriteString(x.Module + "\n" + x.Name + "\n")
		e.memoize(x)
	case Reduce:
		return e.reduce(&x, false)
	case *Reduce:
		return e.reduce(x, true)
	case PersistentID:
		if err := e.value(x.ID); err != nil {
			return err
		}
		e.op(opBINPERSID)
	default:
		return fmt.Errorf("pickle: cannot pickle Go type %T", v)
	}
	return nil
}

func (e *Encoder) reduce(r *Reduce, memo bool) error {
	if memo && e.fromMemo(r) {
		return nil
	}
	if err := e.value(r.Callable); err != nil {
		return err
	}
	if err := e.tuple(r.Args); err != nil {
		return err
	}
	e.op(opREDUCE)
	if memo {
		e.memoize(r)
	}
	return nil
}

func (e *Encoder) int(v int64) {
	switch {
	case v >= 0 && v < 1<<8:
		e.op(opBININT1, byte(v))
	case v >= 0 && v < 1<<16:
		e.op(opBININT2, byte(v), byte(v>>8))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		var b [5]byte
		b[0] = opBININT
		binary.LittleEndian.PutUint32(b[1:], uint32(int32(v)))
		e.op(b[:]...)
	default:
		e.long(big.NewInt(v))
	}
}

// long writes LONG1/LONG4: little-endian two's complement, minimal length.
func (e *Encoder) long(x *big.Int) {
	// n bytes hold any x with BitLen < 8n; two's complement of a negative x
	// over n bytes is 2^(8n) + x, which then has exactly n bytes.
	n := (x.BitLen() + 8) / 8
	u := x
	if x.Sign() < 0 {
		u = new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), x)
	}
	be := u.Bytes()
	b := make([]byte, n)
	for i, c := range be {
		b[len(be)-1-i] = c
	}
	// Drop redundant sign bytes.
	for len(b) > 1 {
		last, prev := b[len(b)-1], b[len(b)-2]
		if (last == 0 && prev&0x80 == 0) || (last == 0xff && prev&0x80 != 0) {
			b = b[:len(b)-1]
			continue
		}
		break
	}
	if len(b) < 256 {
		e.op(opLONG1, byte(len(b)))
	} else {
		var h [5]byte
		h[0] = opLONG4
		binary.LittleEndian.PutUint32(h[1:], uint32(len(b)))
		e.op(h[:]...)
	}
	e.op(b...)
}

func (e *Encoder) str(s string) {
	var h [5]byte
	h[0] = opBINUNICODE
	binary.LittleEndian.PutUint32(h[1:], uint32(len(s)))
	e.op(h[:]...)
	e.w.WriteString(s)
}

func (e *Encoder) tuple(t Tuple) error {
	switch len(t) {
	case 0:
		e.op(opEMPTY_TUPLE)
		return nil
	case 1, 2, 3:
		for _, it := range t {
			if err := e.value(it); err != nil {
				return err
			}
		}
		e.op(opTUPLE1 + byte(len(t)-1))
		return nil
	}
	e.op(opMARK)
	for _, it := range t {
		if err := e.value(it); err != nil {
			return err
		}
	}
	e.op(opTUPLE)
	return nil
}

func (e *Encoder) list(l *List) error {
	if e.fromMemo(l) {
		return nil
	}
	e.op(opEMPTY_LIST)
	e.memoize(l)
	for i := 0; i < len(l.Items); i += batch {
		items := l.Items[i:min(i+batch, len(l.Items))]
		if len(items) > 1 {
			e.op(opMARK)
		}
		for _, it := range items {
			if err := e.value(it); err != nil {
				return err
			}
		}
		if len(items) > 1 {
			e.op(opAPPENDS)
		} else {
			e.op(opAPPEND)
		}
	}
	return nil
}

func (e *Encoder) dict(d *Dict) error {
	if e.fromMemo(d) {
		return nil
	}
	if len(d.Keys) != len(d.Values) {
		return fmt.Errorf("pickle: dict with %d keys and %d values", len(d.Keys), len(d.Values))
	}
	e.op(opEMPTY_DICT)
	e.memoize(d)
	for i := 0; i < len(d.Keys); i += batch {
		j := min(i+batch, len(d.Keys))
		if j-i > 1 {
			e.op(opMARK)
		}
		for k := i; k < j; k++ {
			if err := e.value(d.Keys[k]); err != nil {
				return err
			}
			if err := e.value(d.Values[k]); err != nil {
				return err
			}
		}
		if j-i > 1 {
			e.op(opSETITEMS)
		} else {
			e.op(opSETITEM)
		}
	}
	return nil
}
