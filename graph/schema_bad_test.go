package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realSchemas are well-formed schemas whose prefixes and mutations make
// the malformed ones below.
var realSchemas = []string{
	"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
	"aten::wait(Future(t) self) -> t",
	"aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
	"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
	"aten::clear.str(Dict(str, t)(a!) self) -> ()",
	"aten::format(str self, ...) -> str",
	`aten::gelu(Tensor self, *, str approximate="none") -> Tensor`,
	"aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
	"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
	"prim::x(Union(int, str) a, RRef(t) b, Optional[int] c, List[int] d) -> ((int, int), ...)",
}

// TestParseSchemaBad: malformed schemas (a bare Future, truncated,
// garbage) are errors, never panics.
func TestParseSchemaBad(t *testing.T) {
	tests := []struct{ src, err string }{
		{"", "missing '('"},
		{"Future", "missing '('"},
		{"aten::wait(Future self) -> t", "expected ( after Future"},
		{"aten::wait(Future) -> t", "expected ( after Future"},
		{"aten::f(Tensor self) -> Future", "expected ( after Future"},
		{"aten::wait(Future( self) -> t", "unbalanced parentheses"},
		{"aten::wait(Future() self) -> t", "expected a type name"},
		{"aten::wait(Future(t self) -> t", "unbalanced parentheses"},
		{"aten::wait(Future(t, t) self) -> t", "bad Future type"},
		{"aten::wait(Future(t) self) ->", "missing returns"},
		{"aten::wait(Future(t) self) - > t", "missing '->'"},
		{"aten::wait(Future(t) self)", "missing '->'"},
		{"aten::wait(", "unbalanced parentheses"},
		{"(Tensor x) -> Tensor", "bad operator name"},
		{"aten::(Tensor x) -> Tensor", "bad operator name"},
		{"aten f(Tensor x) -> Tensor", "bad operator name"},
		{"aten::f.(Tensor x) -> Tensor", "empty overload name"},
		{"aten::f.a b(Tensor x) -> Tensor", "bad operator name"},
		{"aten::f(Tensor x=) -> Tensor", "empty default"},
		{"aten::f(Tensor x,) -> Tensor", "empty argument"},
		{"aten::f(, Tensor x) -> Tensor", "empty argument"},
		{"aten::f(Tensor x) -> Tensor,", "empty argument"},
		{"aten::f(Dict(str) d) -> t", "bad Dict type"},
		{"aten::f(Dict d) -> t", "expected ( after Dict"},
		{"aten::f(Optional() x) -> t", "expected a type name"},
		{"aten::f(int[-1] x) -> t", "bad list length"},
		{"aten::f(int[2 x) -> t", "unbalanced parentheses"},
		{"aten::f(Tensor(a x) -> t", "unbalanced parentheses"},
		{"aten::f(Tensor x) -> ((Tensor, Tensor)", "bad"},
		{"aten::f(Tensor x)) -> Tensor", "missing '->'"},
		{"aten::f(Blob x) -> Tensor", "unknown schema type"},
		{"aten::f(" + strings.Repeat("(", 100) + "Tensor" + strings.Repeat(")", 100) + " x) -> Tensor", "nested too deeply"},
		{")(", "bad operator name"},
		{"->", "missing '('"},
		{"aten::f(Tensor\x00 x) -> Tensor", "bad type"},
		{"aten::f(Tensor x) -> Tensor\xff", "bad type"},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = ParseSchema(tc.src) })
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestParseSchemaMangled: every prefix of a real schema, and every one
// with a byte replaced by punctuation, parses or is an error, never a
// panic; a prefix that stops before the returns is an error, and what
// parses prints as a schema that parses again the same.
func TestParseSchemaMangled(t *testing.T) {
	const punct = "()[]{},?*!=-> .:\"'\\|"
	for _, src := range realSchemas {
		arrow := strings.LastIndex(src, "->")
		for n := 0; n < len(src); n++ {
			checkSchemaText(t, src[:n])
			if n <= arrow+len("->") {
				_, err := ParseSchema(src[:n])
				assert.Error(t, err, "prefix %q", src[:n])
			}
			for _, c := range []byte(punct) {
				checkSchemaText(t, src[:n]+string(c)+src[n+1:])
			}
		}
	}
}

// checkSchemaText parses src, which must not panic; a schema it accepts
// must print as one that parses to the same print.
func checkSchemaText(t *testing.T, src string) {
	t.Helper()
	var s *Schema
	var err error
	require.NotPanics(t, func() { s, err = ParseSchema(src) }, "%q", src)
	if err != nil {
		return
	}
	printed := s.String()
	s2, err := ParseSchema(printed)
	require.NoError(t, err, "%q printed as %q", src, printed)
	assert.Equal(t, printed, s2.String(), "%q", src)
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range realSchemas {
		f.Add(s)
	}
	f.Add("aten::wait(Future self) -> t")
	f.Fuzz(func(t *testing.T, src string) {
		checkSchemaText(t, src)
		require.NotPanics(t, func() { _, _, _, _ = ParseSchemaType(src) })
	})
}
