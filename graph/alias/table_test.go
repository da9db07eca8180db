package alias

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph/schemas"
)

// dumpTable writes the schema table as text, one line per overload or op,
// in a fixed order (the maps' order is random): annotated ops by name,
// each one's overloads in PyTorch's registration order, then the fresh
// and the Generator-taking op names.
func dumpTable(annotated map[string][]opAlias, fresh, generator map[string]bool) string {
	var b strings.Builder
	for _, name := range sortedKeys(annotated) {
		for _, m := range annotated[name] {
			fmt.Fprintf(&b, "annotated %s | %s | points=%v elems=%v wild=%v writes=%v escapes=%v\n",
				name, m.schema, m.points, m.elems, m.wild, m.writes, m.escapes)
		}
	}
	for _, name := range sortedKeys(fresh) {
		if fresh[name] {
			fmt.Fprintf(&b, "fresh %s\n", name)
		}
	}
	for _, name := range sortedKeys(generator) {
		if generator[name] {
			fmt.Fprintf(&b, "generator %s\n", name)
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestTableMatchesGolden: the table read from package schemas' list
// equals the one gen.py generated into schemas_gen.go from PyTorch's
// schema objects (testdata/schema_table.golden, dumped from that
// generated table before it was removed): same annotated overloads in
// the same order with the same alias facts, same fresh and
// Generator-taking ops.
func TestTableMatchesGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/schema_table.golden")
	require.NoError(t, err)
	annotated, fresh, generator := fullTable()
	got := dumpTable(annotated, fresh, generator)
	if got == string(want) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	var diff []string
	for i := 0; i < max(len(wl), len(gl)) && len(diff) < 20; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			diff = append(diff, fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, w, g))
		}
	}
	t.Fatalf("table differs from the golden one (%d against %d lines):\n%s", len(gl), len(wl), strings.Join(diff, "\n"))
}

func TestParseAlias(t *testing.T) {
	tests := []struct {
		text           string
		name           string
		want           opAlias
		annotated, gen bool
	}{
		{text: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", name: "aten::add",
			want: opAlias{schema: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"}},
		{text: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", name: "aten::add",
			want:      opAlias{schema: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor out) -> Tensor", points: [][]int{{3}}, writes: []int{3}},
			annotated: true},
		{text: "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", name: "aten::split",
			want:      opAlias{schema: "aten::split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", elems: [][]int{{0}}, escapes: []int{0}},
			annotated: true},
		{text: "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)", name: "aten::append",
			want:      opAlias{schema: "aten::append.t(t[] self, t el) -> t[]", points: [][]int{{0}}, writes: []int{0}, escapes: []int{1}},
			annotated: true},
		{text: "aten::__getitem__.t(t[](a) list, int idx) -> t(*)", name: "aten::__getitem__",
			want:      opAlias{schema: "aten::__getitem__.t(t[] list, int idx) -> t", wild: []bool{true}},
			annotated: true},
		{text: "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", name: "aten::max",
			want: opAlias{schema: "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"}},
		{text: "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", name: "aten::bernoulli",
			want: opAlias{schema: "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"}, gen: true},
		{text: "prim::NumToTensor.Scalar(Scalar a) -> Tensor", name: "prim::NumToTensor",
			want: opAlias{schema: "prim::NumToTensor.Scalar(Scalar a) -> Tensor"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			m, annotated, gen := parseAlias(tt.text)
			assert.Equal(t, tt.name, opName(tt.text))
			assert.Equal(t, tt.want, m)
			assert.Equal(t, tt.annotated, annotated)
			assert.Equal(t, tt.gen, gen)
		})
	}
}

// torchvision's ops are in the schema list but not in the table: the
// analysis treats them as unknown, as it did before they were in the list.
func TestTableLeavesOutTorchvision(t *testing.T) {
	for _, kind := range []string{"torchvision::nms", "torchvision::roi_align", "image::decode_png", "video_reader::probe_video_from_file"} {
		assert.False(t, IsKnownOp(kind), kind)
	}
	assert.True(t, IsKnownOp("aten::add"))
	assert.True(t, IsKnownOp("quantized::add"))
}

// fullTable reads every op of the schema list as the analysis reads the
// ops it meets: the annotated ones with their overloads, the fresh ones
// and those taking a Generator.
func fullTable() (annotated map[string][]opAlias, fresh, generator map[string]bool) {
	annotated, fresh, generator = map[string][]opAlias{}, map[string]bool{}, map[string]bool{}
	for name := range schemasByOp() {
		o := infoOf(name)
		if o.annotated {
			for _, p := range o.overloads() {
				annotated[name] = append(annotated[name], *p.alias)
			}
		}
		if o.fresh() {
			fresh[name] = true
		}
		if o.generator {
			generator[name] = true
		}
	}
	return annotated, fresh, generator
}

// BenchmarkSchemasByOp is the analysis' first-use cost: grouping the
// schema list by op (done once, not at init; each op is read when first
// met).
func BenchmarkSchemasByOp(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		groupByOp(schemas.Lines())
	}
}

// BenchmarkReadAllOps reads every op of the list, as fullTable does: the
// most a program's ops can cost on first meeting them, parsing their
// schemas included.
func BenchmarkReadAllOps(b *testing.B) {
	lines := schemasByOp()
	b.ReportAllocs()
	for b.Loop() {
		for _, ls := range lines {
			if o := readOp(ls); o.annotated {
				o.overloads()
			}
		}
	}
}

// unsupported is a hand-written \b(complex|RRef|Future|AnyEnumType|__torch__\.[\w.]+)\b.
func TestUnsupported(t *testing.T) {
	re := regexp.MustCompile(`\b(complex|RRef|Future|AnyEnumType|__torch__\.[\w.]+)\b`)
	cases := []string{
		"aten::add.complex(complex a, complex b) -> complex",
		"aten::wait(Future(t) self) -> t",
		"aten::foo(Tensor complexity) -> Tensor",
		"aten::foo(Tensor is_complex) -> Tensor",
		"aten::is_complex(Tensor self) -> bool",
		"aten::foo(__torch__.torch.classes.quantized.Conv2dPackedParamsBase w) -> Tensor",
		"aten::foo(x__torch__.A w) -> Tensor",
		"aten::foo(__torch__.. w) -> Tensor",
		"aten::foo(AnyEnumType x, RRef(t) y) -> Tensor",
		"aten::foo(Tensor x) -> Tensor",
	}
	cases = append(cases, schemas.Lines()...)
	for _, c := range cases {
		require.Equal(t, re.MatchString(c), unsupported(c), c)
	}
}

// findAnnotation and stripAnnotations are hand-written
// \(([a-z*|]+(?: -> [a-z*|]+)?!?)\) (the regular expression gen.py used).
func TestFindAnnotation(t *testing.T) {
	re := regexp.MustCompile(`\(([a-z*|]+(?: -> [a-z*|]+)?!?)\)`)
	cases := []string{"Tensor(a!) self", "t[](a) l", "Tensor(a -> *) x", "Tensor(a|b) x", "t(*)", "Dict(str, t)(a!) self",
		"Tensor(A) x", "Tensor(a -> ) x", "Tensor(a!!) x", "Tensor(a", "(", "", "Tensor(a -> b!) x", "Tensor(a->b) x"}
	cases = append(cases, schemas.Lines()...)
	for _, c := range cases {
		open, close := findAnnotation(c)
		want := re.FindStringIndex(c)
		if want == nil {
			require.Equal(t, -1, open, c)
		} else {
			require.Equal(t, []int{want[0], want[1] - 1}, []int{open, close}, c)
		}
		require.Equal(t, re.ReplaceAllString(c, ""), stripAnnotations(c), c)
	}
}
