package pickle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Options configure Unpickle. The zero value reads plain data and rejects
// every global and persistent id.
type Options struct {
	// Name names the pickle in errors ("data.pkl").
	Name string
	// Global resolves GLOBAL, STACK_GLOBAL, INST and OBJ. It decides what
	// a pickle may construct or call: return an error for anything not
	// allowed. Nil rejects every global.
	Global func(module, name string) (any, error)
	// PersistentLoad resolves PERSID and BINPERSID. Nil rejects them.
	PersistentLoad func(pid any) (any, error)
	// Buffers are the out-of-band buffers NEXT_BUFFER takes, in order.
	Buffers [][]byte

	// Limits against hostile input; zero means the default.
	MaxStack  int // items on the stack (default 1<<24)
	MaxMemo   int // memo entries (default 1<<24)
	MaxMarks  int // nested MARKs (default 1<<12)
	MaxValues int // values pushed in all, lists' items included (default: no limit but the input's size)
}

// Error is an unpickling error: where in which pickle, and why.
type Error struct {
	Name   string // Options.Name
	Offset int    // byte offset of the opcode that failed
	Err    error
}

func (e *Error) Error() string {
	name := "pickle"
	if e.Name != "" {
		name += " " + e.Name
	}
	return fmt.Sprintf("%s at byte %d: %v", name, e.Offset, e.Err)
}

// Unwrap returns the cause (a hook's error, for instance).
func (e *Error) Unwrap() error { return e.Err }

// Unpickle decodes one pickle from data and returns its value. Bytes after
// the STOP opcode are ignored, as Python does.
func Unpickle(data []byte, opts *Options) (v any, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxStack <= 0 {
		o.MaxStack = 1 << 24
	}
	if o.MaxMemo <= 0 {
		o.MaxMemo = 1 << 24
	}
	if o.MaxMarks <= 0 {
		o.MaxMarks = 1 << 12
	}
	m := &machine{data: data, o: &o, budget: 8*len(data) + 1<<16}
	defer func() {
		// A safety net: the machine checks its input, so this only fires
		// on a bug (in the machine or in a hook) and keeps the caller alive.
		if r := recover(); r != nil {
			v, err = nil, &Error{o.Name, m.op, fmt.Errorf("internal error: %v", r)}
		}
	}()
	v, err = m.run()
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, &Error{o.Name, m.op, err}
	}
	return v, nil
}

type machine struct {
	data   []byte
	pos    int
	op     int // offset of the current opcode
	o      *Options
	stack  []any
	marks  []int
	memo   memo
	budget int // work allowed for hashing keys
	nbuf   int // buffers taken by NEXT_BUFFER
	pushes int // values pushed (MaxValues)
}

var errTruncated = errors.New("truncated: the pickle ends inside an opcode (no STOP)")

func (m *machine) need(n uint64) ([]byte, error) {
	if n > uint64(len(m.data)-m.pos) {
		return nil, fmt.Errorf("%w: needs %d bytes, %d left", errTruncated, n, len(m.data)-m.pos)
	}
	b := m.data[m.pos : m.pos+int(n)]
	m.pos += int(n)
	return b, nil
}

func (m *machine) u8() (int, error) {
	b, err := m.need(1)
	if err != nil {
		return 0, err
	}
	return int(b[0]), nil
}

func (m *machine) u16() (int, error) {
	b, err := m.need(2)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint16(b)), nil
}

func (m *machine) u32() (uint32, error) {
	b, err := m.need(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (m *machine) u64() (uint64, error) {
	b, err := m.need(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// line reads a protocol 0 argument up to its newline.
func (m *machine) line() ([]byte, error) {
	for i := m.pos; i < len(m.data); i++ {
		if m.data[i] == '\n' {
			b := m.data[m.pos:i]
			m.pos = i + 1
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: a text argument has no newline", errTruncated)
}

func (m *machine) base() int {
	if len(m.marks) > 0 {
		return m.marks[len(m.marks)-1]
	}
	return 0
}

func (m *machine) push(v any) error {
	if len(m.stack) >= m.o.MaxStack {
		return fmt.Errorf("stack holds more than %d items", m.o.MaxStack)
	}
	if m.pushes++; m.o.MaxValues > 0 && m.pushes > m.o.MaxValues {
		// Values popped into lists, dicts and tuples stay alive: the stack
		// bound alone lets 2 bytes of pickle make a list item each.
		return fmt.Errorf("the pickle makes more than %d values", m.o.MaxValues)
	}
	if len(m.stack) == cap(m.stack) {
		m.stack = grow(m.stack)
	}
	m.stack = append(m.stack, v)
	return nil
}

// grow doubles s's capacity: append grows large slices by a quarter at a
// time, which allocates about five times the final size along the way
// (a stack or memo filled to its limit by a hostile pickle).
func grow(s []any) []any {
	n := make([]any, len(s), max(2*cap(s), 64))
	copy(n, s)
	return n
}

// memo is the unpickler's memo: a slice for the indices picklers write
// (0, 1, 2, ... as MEMOIZE and Python's pickler number them), a map for
// the others, so that a memo entry costs 16 bytes, not a map entry's 40
// and more.
type memo struct {
	dense  []any // holes are memoHole{}
	sparse map[int]any
	n      int // entries
}

type memoHole struct{}

// maxGap is the most holes put fills in dense to reach an index.
const maxGap = 64

func (mm *memo) has(i int) bool {
	if i >= 0 && i < len(mm.dense) {
		return mm.dense[i] != memoHole{}
	}
	_, ok := mm.sparse[i]
	return ok
}

func (mm *memo) get(i int) (any, bool) {
	if i >= 0 && i < len(mm.dense) {
		v := mm.dense[i]
		return v, v != memoHole{}
	}
	v, ok := mm.sparse[i]
	return v, ok
}

func (mm *memo) set(i int, v any) {
	if !mm.has(i) {
		mm.n++
	}
	switch {
	case i < 0:
	case i < len(mm.dense):
		mm.dense[i] = v
		return
	case i <= len(mm.dense)+maxGap:
		if _, ok := mm.sparse[i]; !ok {
			for k := len(mm.dense); k < i; k++ {
				// An entry put in sparse before dense reached it moves.
				hv, ok := mm.sparse[k]
				if ok {
					delete(mm.sparse, k)
				} else {
					hv = memoHole{}
				}
				mm.appendDense(hv)
			}
			mm.appendDense(v)
			return
		}
	}
	if mm.sparse == nil {
		mm.sparse = map[int]any{}
	}
	mm.sparse[i] = v
}

func (mm *memo) appendDense(v any) {
	if len(mm.dense) == cap(mm.dense) {
		mm.dense = grow(mm.dense)
	}
	mm.dense = append(mm.dense, v)
}

func (m *machine) pop() (any, error) {
	if len(m.stack) <= m.base() {
		return nil, errors.New("stack underflow")
	}
	v := m.stack[len(m.stack)-1]
	m.stack[len(m.stack)-1] = nil
	m.stack = m.stack[:len(m.stack)-1]
	return v, nil
}

func (m *machine) top() (any, error) {
	if len(m.stack) <= m.base() {
		return nil, errors.New("stack underflow")
	}
	return m.stack[len(m.stack)-1], nil
}

// popMark returns a copy of the items above the last MARK and drops them
// and the mark.
func (m *machine) popMark() ([]any, error) {
	if len(m.marks) == 0 {
		return nil, errors.New("no MARK on the stack")
	}
	b := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	items := append([]any(nil), m.stack[b:]...)
	clear(m.stack[b:])
	m.stack = m.stack[:b]
	return items, nil
}

func (m *machine) put(i int, v any) error {
	if i < 0 {
		return fmt.Errorf("negative memo index %d", i)
	}
	if !m.memo.has(i) && m.memo.n >= m.o.MaxMemo {
		return fmt.Errorf("memo holds more than %d entries", m.o.MaxMemo)
	}
	m.memo.set(i, v)
	return nil
}

func (m *machine) get(i int) error {
	v, ok := m.memo.get(i)
	if !ok {
		return fmt.Errorf("memo index %d was never stored", i)
	}
	return m.push(v)
}

func (m *machine) global(module, name string) (any, error) {
	if m.o.Global == nil {
		return nil, fmt.Errorf("global %s.%s is not supported (no globals are allowed)", module, name)
	}
	return m.o.Global(module, name)
}

// instantiate is INST and OBJ: cls(*args).
func instantiate(cls any, args []any) (any, error) {
	switch c := cls.(type) {
	case Class:
		return c.New(args, nil)
	case Callable:
		return c.Call(args)
	}
	return nil, fmt.Errorf("cannot instantiate %T: not a class", cls)
}

func (m *machine) run() (any, error) {
	for {
		m.op = m.pos
		code, err := m.u8()
		if err != nil {
			return nil, err
		}
		if code == opSTOP {
			return m.pop()
		}
		if err := m.step(byte(code)); err != nil {
			return nil, err
		}
	}
}

// Opcodes, as pickletools names them.
const (
	opMARK             = '('
	opSTOP             = '.'
	opPOP              = '0'
	opPOP_MARK         = '1'
	opDUP              = '2'
	opFLOAT            = 'F'
	opINT              = 'I'
	opBININT           = 'J'
	opBININT1          = 'K'
	opLONG             = 'L'
	opBININT2          = 'M'
	opNONE             = 'N'
	opPERSID           = 'P'
	opBINPERSID        = 'Q'
	opREDUCE           = 'R'
	opSTRING           = 'S'
	opBINSTRING        = 'T'
	opSHORT_BINSTRING  = 'U'
	opUNICODE          = 'V'
	opBINUNICODE       = 'X'
	opAPPEND           = 'a'
	opBUILD            = 'b'
	opGLOBAL           = 'c'
	opDICT             = 'd'
	opEMPTY_DICT       = '}'
	opAPPENDS          = 'e'
	opGET              = 'g'
	opBINGET           = 'h'
	opINST             = 'i'
	opLONG_BINGET      = 'j'
	opLIST             = 'l'
	opEMPTY_LIST       = ']'
	opOBJ              = 'o'
	opPUT              = 'p'
	opBINPUT           = 'q'
	opLONG_BINPUT      = 'r'
	opSETITEM          = 's'
	opTUPLE            = 't'
	opEMPTY_TUPLE      = ')'
	opSETITEMS         = 'u'
	opBINFLOAT         = 'G'
	opPROTO            = 0x80
	opNEWOBJ           = 0x81
	opEXT1             = 0x82
	opEXT2             = 0x83
	opEXT4             = 0x84
	opTUPLE1           = 0x85
	opTUPLE2           = 0x86
	opTUPLE3           = 0x87
	opNEWTRUE          = 0x88
	opNEWFALSE         = 0x89
	opLONG1            = 0x8a
	opLONG4            = 0x8b
	opBINBYTES         = 'B'
	opSHORT_BINBYTES   = 'C'
	opSHORT_BINUNICODE = 0x8c
	opBINUNICODE8      = 0x8d
	opBINBYTES8        = 0x8e
	opEMPTY_SET        = 0x8f
	opADDITEMS         = 0x90
	opFROZENSET        = 0x91
	opNEWOBJ_EX        = 0x92
	opSTACK_GLOBAL     = 0x93
	opMEMOIZE          = 0x94
	opFRAME            = 0x95
	opBYTEARRAY8       = 0x96
	opNEXT_BUFFER      = 0x97
	opREADONLY_BUFFER  = 0x98
)

func (m *machine) step(code byte) error {
	switch code {
	case opMARK:
		if len(m.marks) >= m.o.MaxMarks {
			return fmt.Errorf("more than %d nested MARKs", m.o.MaxMarks)
		}
		m.marks = append(m.marks, len(m.stack))
		return nil
	case opPOP:
		if len(m.stack) > m.base() {
			_, err := m.pop()
			return err
		}
		if len(m.marks) == 0 {
			return errors.New("stack underflow")
		}
		_, err := m.popMark()
		return err
	case opPOP_MARK:
		_, err := m.popMark()
		return err
	case opDUP:
		v, err := m.top()
		if err != nil {
			return err
		}
		return m.push(v)

	case opPROTO:
		p, err := m.u8()
		if err != nil {
			return err
		}
		if p > 5 {
			return fmt.Errorf("unsupported pickle protocol %d (supported: 0 to 5)", p)
		}
		return nil
	case opFRAME:
		n, err := m.u64()
		if err != nil {
			return err
		}
		if n > uint64(len(m.data)-m.pos) {
			return fmt.Errorf("%w: frame of %d bytes, %d left", errTruncated, n, len(m.data)-m.pos)
		}
		return nil

	case opNONE:
		return m.push(nil)
	case opNEWTRUE:
		return m.push(true)
	case opNEWFALSE:
		return m.push(false)
	case opINT:
		b, err := m.line()
		if err != nil {
			return err
		}
		switch string(b) {
		case "00":
			return m.push(false)
		case "01":
			return m.push(true)
		}
		v, err := parseIntText(b, false)
		if err != nil {
			return err
		}
		return m.push(v)
	case opLONG:
		b, err := m.line()
		if err != nil {
			return err
		}
		v, err := parseIntText(b, true)
		if err != nil {
			return err
		}
		return m.push(v)
	case opBININT:
		u, err := m.u32()
		if err != nil {
			return err
		}
		return m.push(int64(int32(u)))
	case opBININT1:
		v, err := m.u8()
		if err != nil {
			return err
		}
		return m.push(int64(v))
	case opBININT2:
		v, err := m.u16()
		if err != nil {
			return err
		}
		return m.push(int64(v))
	case opLONG1:
		n, err := m.u8()
		if err != nil {
			return err
		}
		b, err := m.need(uint64(n))
		if err != nil {
			return err
		}
		return m.push(decodeLong(b))
	case opLONG4:
		u, err := m.u32()
		if err != nil {
			return err
		}
		if int32(u) < 0 {
			return fmt.Errorf("LONG4 with negative length %d", int32(u))
		}
		b, err := m.need(uint64(u))
		if err != nil {
			return err
		}
		return m.push(decodeLong(b))
	case opFLOAT:
		b, err := m.line()
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("FLOAT %q: not a number", b)
		}
		return m.push(f)
	case opBINFLOAT:
		b, err := m.need(8)
		if err != nil {
			return err
		}
		return m.push(math.Float64frombits(binary.BigEndian.Uint64(b)))

	case opSTRING:
		b, err := m.line()
		if err != nil {
			return err
		}
		if len(b) < 2 || b[0] != b[len(b)-1] || (b[0] != '\'' && b[0] != '"') {
			return errors.New("the STRING opcode argument must be quoted")
		}
		return m.push(escapeDecode(b[1 : len(b)-1]))
	case opBINSTRING:
		u, err := m.u32()
		if err != nil {
			return err
		}
		if int32(u) < 0 {
			return fmt.Errorf("BINSTRING with negative length %d", int32(u))
		}
		return m.pushString(uint64(u))
	case opSHORT_BINSTRING, opSHORT_BINUNICODE:
		n, err := m.u8()
		if err != nil {
			return err
		}
		return m.pushString(uint64(n))
	case opBINUNICODE:
		u, err := m.u32()
		if err != nil {
			return err
		}
		return m.pushString(uint64(u))
	case opBINUNICODE8:
		n, err := m.u64()
		if err != nil {
			return err
		}
		return m.pushString(n)
	case opUNICODE:
		b, err := m.line()
		if err != nil {
			return err
		}
		return m.push(rawUnicodeEscapeDecode(b))
	case opSHORT_BINBYTES:
		n, err := m.u8()
		if err != nil {
			return err
		}
		return m.pushBytes(uint64(n))
	case opBINBYTES:
		u, err := m.u32()
		if err != nil {
			return err
		}
		return m.pushBytes(uint64(u))
	case opBINBYTES8, opBYTEARRAY8:
		n, err := m.u64()
		if err != nil {
			return err
		}
		return m.pushBytes(n)
	case opNEXT_BUFFER:
		if m.nbuf >= len(m.o.Buffers) {
			return errors.New("NEXT_BUFFER: no out-of-band buffer left (pass them in Options.Buffers)")
		}
		b := m.o.Buffers[m.nbuf]
		m.nbuf++
		return m.push(b)
	case opREADONLY_BUFFER:
		v, err := m.top()
		if err != nil {
			return err
		}
		if _, ok := v.([]byte); !ok {
			return fmt.Errorf("READONLY_BUFFER on %s, expected a buffer", typeName(v))
		}
		return nil

	case opEMPTY_TUPLE:
		return m.push(Tuple{})
	case opTUPLE:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		return m.push(Tuple(items))
	case opTUPLE1, opTUPLE2, opTUPLE3:
		n := int(code-opTUPLE1) + 1
		if len(m.stack)-m.base() < n {
			return errors.New("stack underflow")
		}
		t := append(Tuple(nil), m.stack[len(m.stack)-n:]...)
		clear(m.stack[len(m.stack)-n:])
		m.stack = m.stack[:len(m.stack)-n]
		return m.push(t)
	case opEMPTY_LIST:
		return m.push(&List{})
	case opLIST:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		return m.push(&List{Items: items})
	case opAPPEND:
		v, err := m.pop()
		if err != nil {
			return err
		}
		return m.appendTo([]any{v})
	case opAPPENDS:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		return m.appendTo(items)
	case opEMPTY_DICT:
		return m.push(&Dict{})
	case opDICT:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		d := &Dict{}
		if err := m.setItems(d, items); err != nil {
			return err
		}
		return m.push(d)
	case opSETITEM:
		v, err := m.pop()
		if err != nil {
			return err
		}
		k, err := m.pop()
		if err != nil {
			return err
		}
		d, err := m.top()
		if err != nil {
			return err
		}
		return m.setItems(d, []any{k, v})
	case opSETITEMS:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		d, err := m.top()
		if err != nil {
			return err
		}
		return m.setItems(d, items)
	case opEMPTY_SET:
		return m.push(&Set{})
	case opADDITEMS:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		v, err := m.top()
		if err != nil {
			return err
		}
		s, ok := v.(*Set)
		if !ok || s.Frozen {
			return fmt.Errorf("ADDITEMS on %s, expected a set", typeName(v))
		}
		for _, it := range items {
			if err := s.add(it, &m.budget); err != nil {
				return err
			}
		}
		return nil
	case opFROZENSET:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		s := &Set{Frozen: true}
		for _, it := range items {
			if err := s.add(it, &m.budget); err != nil {
				return err
			}
		}
		return m.push(s)

	case opPUT:
		b, err := m.line()
		if err != nil {
			return err
		}
		i, err := strconv.Atoi(string(b))
		if err != nil {
			return fmt.Errorf("PUT %q: not a memo index", b)
		}
		v, err := m.top()
		if err != nil {
			return err
		}
		return m.put(i, v)
	case opBINPUT, opLONG_BINPUT, opMEMOIZE:
		var i int
		switch code {
		case opBINPUT:
			n, err := m.u8()
			if err != nil {
				return err
			}
			i = n
		case opLONG_BINPUT:
			u, err := m.u32()
			if err != nil {
				return err
			}
			i = int(u)
		default:
			i = m.memo.n
		}
		v, err := m.top()
		if err != nil {
			return err
		}
		return m.put(i, v)
	case opGET:
		b, err := m.line()
		if err != nil {
			return err
		}
		i, err := strconv.Atoi(string(b))
		if err != nil {
			return fmt.Errorf("GET %q: not a memo index", b)
		}
		return m.get(i)
	case opBINGET:
		i, err := m.u8()
		if err != nil {
			return err
		}
		return m.get(i)
	case opLONG_BINGET:
		u, err := m.u32()
		if err != nil {
			return err
		}
		return m.get(int(u))

	case opGLOBAL:
		mod, err := m.line()
		if err != nil {
			return err
		}
		name, err := m.line()
		if err != nil {
			return err
		}
		g, err := m.global(string(mod), string(name))
		if err != nil {
			return err
		}
		return m.push(g)
	case opSTACK_GLOBAL:
		name, err := m.pop()
		if err != nil {
			return err
		}
		mod, err := m.pop()
		if err != nil {
			return err
		}
		ms, ok1 := mod.(string)
		ns, ok2 := name.(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("STACK_GLOBAL with %s and %s, expected two strings", typeName(mod), typeName(name))
		}
		g, err := m.global(ms, ns)
		if err != nil {
			return err
		}
		return m.push(g)
	case opINST:
		mod, err := m.line()
		if err != nil {
			return err
		}
		name, err := m.line()
		if err != nil {
			return err
		}
		args, err := m.popMark()
		if err != nil {
			return err
		}
		cls, err := m.global(string(mod), string(name))
		if err != nil {
			return err
		}
		v, err := instantiate(cls, args)
		if err != nil {
			return err
		}
		return m.push(v)
	case opOBJ:
		items, err := m.popMark()
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return errors.New("OBJ without a class")
		}
		v, err := instantiate(items[0], items[1:])
		if err != nil {
			return err
		}
		return m.push(v)
	case opREDUCE:
		args, err := m.pop()
		if err != nil {
			return err
		}
		f, err := m.pop()
		if err != nil {
			return err
		}
		t, ok := args.(Tuple)
		if !ok {
			return fmt.Errorf("REDUCE arguments are %s, expected a tuple", typeName(args))
		}
		c, ok := f.(Callable)
		if !ok {
			return fmt.Errorf("REDUCE on %s, which is not callable", typeName(f))
		}
		v, err := c.Call(t)
		if err != nil {
			return err
		}
		return m.push(v)
	case opNEWOBJ, opNEWOBJ_EX:
		var kwargs *Dict
		if code == opNEWOBJ_EX {
			kw, err := m.pop()
			if err != nil {
				return err
			}
			d, ok := kw.(*Dict)
			if !ok {
				return fmt.Errorf("NEWOBJ_EX keyword arguments are %s, expected a dict", typeName(kw))
			}
			kwargs = d
		}
		args, err := m.pop()
		if err != nil {
			return err
		}
		cls, err := m.pop()
		if err != nil {
			return err
		}
		t, ok := args.(Tuple)
		if !ok {
			return fmt.Errorf("NEWOBJ arguments are %s, expected a tuple", typeName(args))
		}
		c, ok := cls.(Class)
		if !ok {
			return fmt.Errorf("NEWOBJ on %s, which is not a class", typeName(cls))
		}
		v, err := c.New(t, kwargs)
		if err != nil {
			return err
		}
		return m.push(v)
	case opBUILD:
		state, err := m.pop()
		if err != nil {
			return err
		}
		inst, err := m.top()
		if err != nil {
			return err
		}
		b, ok := inst.(Buildable)
		if !ok {
			return fmt.Errorf("BUILD on %s, which takes no state", typeName(inst))
		}
		return b.SetState(state)
	case opPERSID:
		b, err := m.line()
		if err != nil {
			return err
		}
		return m.persistent(string(b))
	case opBINPERSID:
		pid, err := m.pop()
		if err != nil {
			return err
		}
		return m.persistent(pid)
	case opEXT1, opEXT2, opEXT4:
		return fmt.Errorf("extension registry opcode 0x%02x is not supported", code)
	}
	return fmt.Errorf("unknown opcode 0x%02x", code)
}

func (m *machine) persistent(pid any) error {
	if m.o.PersistentLoad == nil {
		return errors.New("persistent id found, but persistent ids are not supported here")
	}
	v, err := m.o.PersistentLoad(pid)
	if err != nil {
		return err
	}
	return m.push(v)
}

func (m *machine) pushString(n uint64) error {
	b, err := m.need(n)
	if err != nil {
		return err
	}
	return m.push(string(b))
}

func (m *machine) pushBytes(n uint64) error {
	b, err := m.need(n)
	if err != nil {
		return err
	}
	return m.push(append([]byte{}, b...))
}

func (m *machine) appendTo(items []any) error {
	v, err := m.top()
	if err != nil {
		return err
	}
	switch l := v.(type) {
	case *List:
		if need := len(l.Items) + len(items); need > cap(l.Items) {
			n := make([]any, len(l.Items), max(need, 2*cap(l.Items)))
			copy(n, l.Items)
			l.Items = n
		}
		l.Items = append(l.Items, items...)
		return nil
	case Appender:
		for _, it := range items {
			if err := l.Append(it); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("APPEND to %s, expected a list", typeName(v))
}

func (m *machine) setItems(target any, items []any) error {
	if len(items)%2 != 0 {
		return fmt.Errorf("odd number of items (%d) for a dict", len(items))
	}
	switch d := target.(type) {
	case *Dict:
		for i := 0; i < len(items); i += 2 {
			if err := d.set(items[i], items[i+1], &m.budget); err != nil {
				return err
			}
		}
		return nil
	case ItemSetter:
		for i := 0; i < len(items); i += 2 {
			if err := d.SetItem(items[i], items[i+1]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("SETITEM on %s, expected a dict", typeName(target))
}

// decodeLong reads a little-endian two's complement integer (LONG1/LONG4).
func decodeLong(b []byte) any {
	if len(b) == 0 {
		return int64(0)
	}
	if len(b) <= 8 {
		var u uint64
		for i := len(b) - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		shift := 64 - 8*uint(len(b))
		return int64(u<<shift) >> shift
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if x.IsInt64() {
		return x.Int64()
	}
	return x
}

// maxDigits bounds decimal integers, as Python's int_max_str_digits does
// (decimal conversion is superlinear).
const maxDigits = 4300

// parseIntText reads INT and LONG arguments ("123", "-5", "123L").
func parseIntText(b []byte, long bool) (any, error) {
	s := string(b)
	if long && len(s) > 0 && s[len(s)-1] == 'L' {
		s = s[:len(s)-1]
	}
	if len(s) > maxDigits+1 {
		return nil, fmt.Errorf("integer of %d digits exceeds the limit of %d", len(s), maxDigits)
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("%q is not an integer", b)
	}
	return x, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64, *big.Int:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a str"
	case []byte:
		return "bytes"
	case Tuple:
		return "a tuple"
	case *List:
		return "a list"
	case *Dict:
		return "a dict"
	case *Set:
		return "a set"
	}
	return fmt.Sprintf("%T", v)
}
