package pickle

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// escapeDecode undoes Python's string escapes (codecs.escape_decode), the
// form protocol 0's STRING uses. Unknown escapes are kept, as Python does.
func escapeDecode(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out.WriteByte(c)
			continue
		}
		i++
		switch e := b[i]; e {
		case '\n':
		case '\\', '\'', '"':
			out.WriteByte(e)
		case 'a':
			out.WriteByte(7)
		case 'b':
			out.WriteByte(8)
		case 'f':
			out.WriteByte(12)
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'v':
			out.WriteByte(11)
		case 'x':
			if i+2 < len(b) {
				if v, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
					out.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			out.WriteString(`\x`)
		default:
			if e >= '0' && e <= '7' {
				v, j := 0, i
				for ; j < len(b) && j < i+3 && b[j] >= '0' && b[j] <= '7'; j++ {
					v = v*8 + int(b[j]-'0')
				}
				out.WriteByte(byte(v))
				i = j - 1
				continue
			}
			out.WriteByte('\\')
			out.WriteByte(e)
		}
	}
	return out.String()
}

// rawUnicodeEscapeDecode is Python's raw-unicode-escape codec, protocol 0's
// UNICODE: \uXXXX and \UXXXXXXXX are escapes, every other byte is a
// Latin-1 code point.
func rawUnicodeEscapeDecode(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') {
			n := 4
			if b[i+1] == 'U' {
				n = 8
			}
			if i+2+n <= len(b) {
				if v, err := strconv.ParseUint(string(b[i+2:i+2+n]), 16, 32); err == nil {
					r := rune(v)
					if !utf8.ValidRune(r) && !(r >= 0xD800 && r <= 0xDFFF) {
						r = utf8.RuneError
					}
					writeRune(&out, r)
					i += 1 + n
					continue
				}
			}
		}
		out.WriteRune(rune(c))
	}
	return out.String()
}

// writeRune writes r as UTF-8, surrogates included (Python's
// "surrogatepass"), so that lone surrogates survive a round trip.
func writeRune(out *strings.Builder, r rune) {
	if r >= 0xD800 && r <= 0xDFFF {
		out.WriteByte(byte(0xE0 | r>>12))
		out.WriteByte(byte(0x80 | (r>>6)&0x3F))
		out.WriteByte(byte(0x80 | r&0x3F))
		return
	}
	out.WriteRune(r)
}
