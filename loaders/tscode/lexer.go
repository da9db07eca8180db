package tscode

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a syntax error at a place in a source file; its text is
// `file:line:col: message`.
type Error struct {
	Pos
	Msg string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tNewline
	tIndent
	tDedent
	tName
	tKeyword
	tInt
	tFloat
	tString
	tOp // operators and delimiters; the text says which
)

type token struct {
	kind tokKind
	pos  Pos
	text string // source text (names, keywords, operators, numbers)
	str  string // decoded value of a string literal
	bad  string // set on a string literal that decodes to bytes (b"..."): the parser reports it
}

// describe names a token for "found X" in error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tNewline:
		return "end of line"
	case tIndent:
		return "indent"
	case tDedent:
		return "dedent"
	case tName:
		return fmt.Sprintf("name %q", t.text)
	case tInt, tFloat:
		return "number " + t.text
	case tString:
		return "string literal"
	}
	return fmt.Sprintf("%q", t.text)
}

var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
}

// operators and delimiters; the lexer takes the longest match.
var operators = map[string]bool{
	"**=": true, "//=": true, ">>=": true, "<<=": true, "...": true,
	"->": true, "**": true, "//": true, "<<": true, ">>": true, "<=": true, ">=": true, "==": true,
	"!=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true, "|=": true,
	"^=": true, "@=": true, ":=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "@": true, "&": true, "|": true, "^": true,
	"~": true, "<": true, ">": true, "(": true, ")": true, "[": true, "]": true, "{": true, "}": true,
	",": true, ":": true, ".": true, ";": true, "=": true,
}

var closers = map[byte]byte{')': '(', ']': '[', '}': '{'}

// lexer turns source into tokens with Python 3's rules for what PythonPrint
// writes: INDENT/DEDENT from leading spaces, implicit line joining inside
// brackets, backslash continuation.
type lexer struct {
	name       string
	src        []byte
	off        int
	line       int
	lineStart  int // offset of the current line's first byte
	indents    []int
	brackets   []token // open brackets, for matching and for "unclosed" errors
	toks       []token
	atLineHead bool // at the start of a logical line: indentation is measured
	lineFirst  int  // index in toks of the current logical line's first token
}

func (lx *lexer) pos(off int) Pos {
	return Pos{File: lx.name, Line: lx.line, Col: off - lx.lineStart + 1}
}

func (lx *lexer) errf(off int, format string, args ...any) *Error {
	return &Error{Pos: lx.pos(off), Msg: fmt.Sprintf(format, args...)}
}

func (lx *lexer) emit(kind tokKind, off int, text string) {
	lx.toks = append(lx.toks, token{kind: kind, pos: lx.pos(off), text: text})
	if kind == tNewline {
		lx.lineFirst = len(lx.toks)
	}
}

func (lx *lexer) newline() {
	lx.line++
	lx.lineStart = lx.off
}

// lex tokenizes the whole file.
func lex(name string, src []byte) ([]token, error) {
	lx := &lexer{name: name, src: src, line: 1, indents: []int{0}, atLineHead: true}
	// About one token per 4 bytes in PythonPrint's code; no more than
	// maxStmtTokens up front, so that a huge file is not paid for before
	// it is read.
	lx.toks = make([]token, 0, min(len(src)/4+16, maxStmtTokens))
	if err := lx.run(); err != nil {
		return nil, err
	}
	return lx.toks, nil
}

func (lx *lexer) run() error {
	// A UTF-8 byte order mark is not part of the code.
	if strings.HasPrefix(string(lx.src[:min(3, len(lx.src))]), "\ufeff") {
		lx.off, lx.lineStart = 3, 3
	}
	for {
		if n := len(lx.toks) - lx.lineFirst; n > maxStmtTokens {
			return &Error{Pos: lx.toks[lx.lineFirst].pos, Msg: fmt.Sprintf("statement longer than %d tokens", maxStmtTokens)}
		}
		if lx.atLineHead {
			done, err := lx.indentation()
			if err != nil {
				return err
			}
			if done {
				return nil
			}
		}
		if lx.off >= len(lx.src) {
			return lx.finish()
		}
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			lx.off++
		case c == '#':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' && lx.src[lx.off] != '\r' {
				lx.off++
			}
		case c == '\n' || c == '\r':
			start := lx.off
			lx.off++
			if c == '\r' && lx.off < len(lx.src) && lx.src[lx.off] == '\n' {
				lx.off++
			}
			if len(lx.brackets) == 0 {
				lx.emit(tNewline, start, "")
				lx.atLineHead = true
			}
			lx.newline()
		case c == '\\':
			start := lx.off
			lx.off++
			switch {
			case lx.off >= len(lx.src):
				return lx.errf(start, "unexpected end of file after line-continuation backslash")
			case lx.src[lx.off] == '\n':
				lx.off++
			case lx.src[lx.off] == '\r':
				lx.off++
				if lx.off < len(lx.src) && lx.src[lx.off] == '\n' {
					lx.off++
				}
			default:
				return lx.errf(start, "unexpected character after line-continuation backslash")
			}
			lx.newline()
		case c >= '0' && c <= '9' || c == '.' && lx.off+1 < len(lx.src) && isDigit(lx.src[lx.off+1]):
			if err := lx.number(); err != nil {
				return err
			}
		case c == '"' || c == '\'':
			if err := lx.stringLit(lx.off, lx.off); err != nil {
				return err
			}
		default:
			r, size := utf8.DecodeRune(lx.src[lx.off:])
			if r == utf8.RuneError && size <= 1 {
				return lx.errf(lx.off, "invalid UTF-8 byte 0x%02x", c)
			}
			if r == '_' || unicode.IsLetter(r) {
				if err := lx.nameOrString(); err != nil {
					return err
				}
				continue
			}
			if err := lx.operator(); err != nil {
				return err
			}
		}
	}
}

// indentation measures a logical line's leading spaces and emits INDENT or
// DEDENTs; blank and comment-only lines are skipped. It reports done at
// end of file.
func (lx *lexer) indentation() (done bool, err error) {
	for {
		col := 0
		for lx.off < len(lx.src) {
			c := lx.src[lx.off]
			if c == ' ' {
				col++
			} else if c == '\f' {
				col = 0 // Python resets the count at a form feed
			} else if c == '\t' {
				return false, lx.errf(lx.off, "tab in indentation (only spaces are accepted)")
			} else {
				break
			}
			lx.off++
		}
		if lx.off >= len(lx.src) {
			return true, lx.finish()
		}
		c := lx.src[lx.off]
		if c == '#' {
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' && lx.src[lx.off] != '\r' {
				lx.off++
			}
			if lx.off >= len(lx.src) {
				return true, lx.finish()
			}
			c = lx.src[lx.off]
		}
		if c == '\n' || c == '\r' {
			lx.off++
			if c == '\r' && lx.off < len(lx.src) && lx.src[lx.off] == '\n' {
				lx.off++
			}
			lx.newline()
			continue
		}
		lx.atLineHead = false
		top := lx.indents[len(lx.indents)-1]
		switch {
		case col > top:
			lx.indents = append(lx.indents, col)
			lx.emit(tIndent, lx.off, "")
		case col < top:
			for col < lx.indents[len(lx.indents)-1] {
				lx.indents = lx.indents[:len(lx.indents)-1]
				lx.emit(tDedent, lx.off, "")
			}
			if col != lx.indents[len(lx.indents)-1] {
				return false, lx.errf(lx.off, "unindent to column %d does not match any outer indentation level", col+1)
			}
		}
		return false, nil
	}
}

// finish closes the last line and the open blocks at end of file.
func (lx *lexer) finish() error {
	if n := len(lx.brackets); n > 0 {
		b := lx.brackets[n-1]
		return &Error{Pos: b.pos, Msg: fmt.Sprintf("unclosed %q: end of file reached before its match", b.text)}
	}
	if n := len(lx.toks); n > 0 && lx.toks[n-1].kind != tNewline && lx.toks[n-1].kind != tDedent {
		lx.emit(tNewline, lx.off, "")
	}
	for len(lx.indents) > 1 {
		lx.indents = lx.indents[:len(lx.indents)-1]
		lx.emit(tDedent, lx.off, "")
	}
	lx.emit(tEOF, lx.off, "")
	return nil
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// nameOrString lexes an identifier, a keyword, or a prefixed string
// literal (r"...", u'...').
func (lx *lexer) nameOrString() error {
	start := lx.off
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		if isNameByte(c) {
			lx.off++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRune(lx.src[lx.off:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
			break
		}
		lx.off += size
	}
	text := string(lx.src[start:lx.off])
	if lx.off < len(lx.src) && (lx.src[lx.off] == '"' || lx.src[lx.off] == '\'') && len(text) <= 2 {
		if p := strings.ToLower(text); p == "r" || p == "u" || p == "b" || p == "rb" || p == "br" || p == "f" || p == "rf" || p == "fr" {
			if strings.Contains(p, "f") {
				return lx.errf(start, "f-strings are not supported in TorchScript code")
			}
			return lx.stringLit(start, lx.off)
		}
	}
	if keywords[text] {
		lx.emit(tKeyword, start, text)
	} else {
		lx.emit(tName, start, text)
	}
	return nil
}

// number lexes an int or float literal; its value is converted by the
// parser (so that -9223372036854775808 can be read as one literal).
func (lx *lexer) number() error {
	start := lx.off
	src := lx.src
	digits := func(ok func(byte) bool) {
		for lx.off < len(src) && (ok(src[lx.off]) || src[lx.off] == '_' && lx.off+1 < len(src) && ok(src[lx.off+1]) && lx.off > start && ok(src[lx.off-1])) {
			lx.off++
		}
	}
	kind := tInt
	if src[lx.off] == '0' && lx.off+1 < len(src) && strings.IndexByte("xXoObB", src[lx.off+1]) >= 0 {
		var ok func(byte) bool
		switch src[lx.off+1] | 0x20 {
		case 'x':
			ok = isHexDigit
		case 'o':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		default:
			ok = func(c byte) bool { return c == '0' || c == '1' }
		}
		lx.off += 2
		if lx.off < len(src) && src[lx.off] == '_' {
			lx.off++
		}
		before := lx.off
		for lx.off < len(src) && (ok(src[lx.off]) || src[lx.off] == '_' && lx.off+1 < len(src) && ok(src[lx.off+1]) && ok(src[lx.off-1])) {
			lx.off++
		}
		if lx.off == before {
			return lx.errf(start, "invalid integer literal %q: no digits after the base prefix", string(src[start:lx.off]))
		}
	} else {
		digits(isDigit)
		if lx.off < len(src) && src[lx.off] == '.' {
			kind = tFloat
			lx.off++
			if lx.off < len(src) && isDigit(src[lx.off]) {
				start2 := lx.off
				for lx.off < len(src) && (isDigit(src[lx.off]) || src[lx.off] == '_' && lx.off+1 < len(src) && isDigit(src[lx.off+1]) && lx.off > start2) {
					lx.off++
				}
			}
		}
		if lx.off < len(src) && (src[lx.off] == 'e' || src[lx.off] == 'E') {
			lx.off++
			if lx.off < len(src) && (src[lx.off] == '+' || src[lx.off] == '-') {
				lx.off++
			}
			if lx.off < len(src) && isDigit(src[lx.off]) {
				kind = tFloat
				for lx.off < len(src) && (isDigit(src[lx.off]) || src[lx.off] == '_' && lx.off+1 < len(src) && isDigit(src[lx.off+1])) {
					lx.off++
				}
			} else {
				return lx.errf(start, "invalid float literal %q: exponent has no digits", string(src[start:lx.off]))
			}
		}
		if kind == tInt {
			text := strings.ReplaceAll(string(src[start:lx.off]), "_", "")
			if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
				return lx.errf(start, "invalid integer literal %q: leading zeros are not allowed (use 0o for octal)", text)
			}
		}
	}
	if lx.off < len(src) {
		c := src[lx.off]
		if c == 'j' || c == 'J' {
			return lx.errf(start, "complex literal %q is not supported", string(src[start:lx.off+1]))
		}
		if isNameByte(c) || c >= utf8.RuneSelf {
			return lx.errf(start, "invalid number literal: %q followed by %q", string(src[start:lx.off]), string(c))
		}
	}
	lx.emit(kind, start, string(src[start:lx.off]))
	return nil
}

// stringLit lexes a string literal whose prefix starts at start and whose
// quote is at q.
func (lx *lexer) stringLit(start, q int) error {
	prefix := strings.ToLower(string(lx.src[start:q]))
	raw := strings.Contains(prefix, "r")
	quote := lx.src[q]
	triple := q+2 < len(lx.src) && lx.src[q+1] == quote && lx.src[q+2] == quote
	startPos := lx.pos(start)
	lx.off = q + 1
	if triple {
		lx.off = q + 3
	}
	var sb strings.Builder
	for {
		if lx.off >= len(lx.src) {
			return &Error{Pos: startPos, Msg: "unterminated string literal: end of file reached before its closing quote"}
		}
		c := lx.src[lx.off]
		switch {
		case c == quote && (!triple || lx.off+2 < len(lx.src) && lx.src[lx.off+1] == quote && lx.src[lx.off+2] == quote):
			if triple {
				lx.off += 3
			} else {
				lx.off++
			}
			t := token{kind: tString, pos: startPos, text: string(lx.src[start:lx.off]), str: sb.String()}
			if strings.Contains(prefix, "b") {
				t.bad = "bytes literals are not supported in TorchScript code"
			}
			lx.toks = append(lx.toks, t)
			return nil
		case c == '\n' || c == '\r':
			if !triple {
				return &Error{Pos: startPos, Msg: "unterminated string literal: end of line reached before its closing quote"}
			}
			lx.off++
			if c == '\r' && lx.off < len(lx.src) && lx.src[lx.off] == '\n' {
				lx.off++
			}
			sb.WriteByte('\n') // Python reads \r\n in a literal as \n
			lx.newline()
		case c == '\\':
			if err := lx.escape(&sb, raw); err != nil {
				return err
			}
		default:
			r, size := utf8.DecodeRune(lx.src[lx.off:])
			if r == utf8.RuneError && size <= 1 {
				return lx.errf(lx.off, "invalid UTF-8 byte 0x%02x in string literal", c)
			}
			sb.Write(lx.src[lx.off : lx.off+size])
			lx.off += size
		}
	}
}

var simpleEscapes = map[byte]byte{
	'\\': '\\', '\'': '\'', '"': '"', 'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
}

// escape decodes the escape sequence at lx.off (a backslash) with Python's
// rules; unknown escapes keep their backslash, as in Python.
func (lx *lexer) escape(sb *strings.Builder, raw bool) error {
	start := lx.off
	lx.off++
	if lx.off >= len(lx.src) {
		return lx.errf(start, "unterminated string literal: end of file after a backslash")
	}
	c := lx.src[lx.off]
	if c == '\n' || c == '\r' {
		// A backslash-newline inside a literal joins lines.
		lx.off++
		if c == '\r' && lx.off < len(lx.src) && lx.src[lx.off] == '\n' {
			lx.off++
		}
		if raw {
			sb.WriteString("\\\n")
		}
		lx.newline()
		return nil
	}
	if raw {
		// In a raw literal a backslash only stops a quote ending the literal.
		sb.WriteByte('\\')
		if c == '\\' || c == '"' || c == '\'' {
			sb.WriteByte(c)
			lx.off++
		}
		return nil
	}
	if v, ok := simpleEscapes[c]; ok {
		sb.WriteByte(v)
		lx.off++
		return nil
	}
	switch {
	case c >= '0' && c <= '7':
		v, n := 0, 0
		for n < 3 && lx.off < len(lx.src) && lx.src[lx.off] >= '0' && lx.src[lx.off] <= '7' {
			v = v*8 + int(lx.src[lx.off]-'0')
			lx.off++
			n++
		}
		sb.WriteRune(rune(v))
		return nil
	case c == 'x' || c == 'u' || c == 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		lx.off++
		if lx.off+n > len(lx.src) {
			return lx.errf(start, "truncated \\%c escape: %d hex digits expected", c, n)
		}
		hex := string(lx.src[lx.off : lx.off+n])
		for i := 0; i < n; i++ {
			if !isHexDigit(hex[i]) {
				return lx.errf(start, "truncated \\%c escape: %d hex digits expected, found %q", c, n, hex)
			}
		}
		v, _ := strconv.ParseUint(hex, 16, 32)
		if v > unicode.MaxRune || v >= 0xD800 && v < 0xE000 {
			return lx.errf(start, "\\%c%s is not a valid Unicode code point", c, hex)
		}
		lx.off += n
		sb.WriteRune(rune(v))
		return nil
	case c == 'N':
		return lx.errf(start, "\\N{...} escapes (Unicode names) are not supported")
	}
	sb.WriteByte('\\')
	return nil
}

// operator lexes an operator or delimiter and tracks bracket nesting.
func (lx *lexer) operator() error {
	rest := lx.src[lx.off:]
	for n := min(3, len(rest)); n > 0; n-- {
		if !operators[string(rest[:n])] {
			continue
		}
		op := string(rest[:n])
		start := lx.off
		switch op {
		case ":=":
			return lx.errf(start, "assignment expressions (:=) are not supported")
		case "(", "[", "{":
			lx.emit(tOp, start, op)
			lx.brackets = append(lx.brackets, lx.toks[len(lx.toks)-1])
			lx.off += len(op)
			return nil
		case ")", "]", "}":
			n := len(lx.brackets)
			if n == 0 {
				return lx.errf(start, "unmatched %q", op)
			}
			if open := lx.brackets[n-1]; open.text[0] != closers[op[0]] {
				return lx.errf(start, "closing %q does not match %q opened at %d:%d", op, open.text, open.pos.Line, open.pos.Col)
			}
			lx.brackets = lx.brackets[:n-1]
		}
		lx.emit(tOp, start, op)
		lx.off += len(op)
		return nil
	}
	r, _ := utf8.DecodeRune(rest)
	return lx.errf(lx.off, "unexpected character %q", r)
}
