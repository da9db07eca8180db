package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance suite, after gonum's blas/testblas: one table of cases,
// run through every entry point under every kernel variant, each result
// checked against a float64 reference within float32's error bound.

// variant is one way the package can compute: a set of micro-kernels
// (asm: the AVX2/FMA assembly, else pure Go; z: the AVX-512 6x32
// kernels too), whether B panels are walked in pairs (pairs: how the
// 6x32 kernels are reached; without z each pair runs two 6x16 kernels)
// and whether a row-major A may be read in place (direct) or is always
// packed.
type variant struct {
	name   string
	asm    bool
	direct bool
	pairs  bool
	z      bool
}

var variants = []variant{
	{"go", false, true, false, false},
	{"go/packedA", false, false, false, false},
	{"go/pairs", false, true, true, false},
	{"avx2", true, true, false, false},
	{"avx2/packedA", true, false, false, false},
	{"avx2/pairs", true, true, true, false},
	{"avx512", true, true, true, true},
	{"avx512/packedA", true, false, true, true},
}

// forEachVariant runs f as a subtest per variant with that variant
// forced, skipping the assembly where the CPU or the build lacks it.
func forEachVariant(t *testing.T, f func(t *testing.T)) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if v.asm && !cpuHasAsm {
				t.Skip("no AVX2/FMA assembly on this CPU or build")
			}
			if v.z && !cpuHasAVX512 {
				t.Skip("no AVX-512 on this CPU or build")
			}
			t.Cleanup(v.force())
			f(t)
		})
	}
}

// force sets the package's switches to v and returns what restores
// them.
func (v variant) force() (restore func()) {
	savedAsm, savedDirect, savedPairs, saved512 := useAsm, noDirect, pairPanels, use512
	useAsm, noDirect, pairPanels, use512 = v.asm, !v.direct, v.pairs, v.z
	return func() { useAsm, noDirect, pairPanels, use512 = savedAsm, savedDirect, savedPairs, saved512 }
}

// layout is how a test operand lies in memory.
type layout int

const (
	rowMajor    layout = iota // CS 1, RS cols
	colMajor                  // RS 1, CS rows (a transposed operand)
	rowPadded                 // CS 1, RS cols+3 (a view into a wider matrix)
	colPadded                 // RS 1, CS rows+5
	bothStrided               // CS 2, RS 2*cols+1: neither stride 1
)

func (l layout) String() string {
	return [...]string{"row", "col", "rowPad", "colPad", "strided"}[l]
}

// newMat fills a rows x cols view of the given layout with N(0, 1)
// values; the storage starts 3 elements in and has slack after, so an
// out-of-view read sees other values, not a fault.
func newMat(r *rand.Rand, rows, cols int, l layout) Mat {
	const off = 3
	var rs, cs int
	switch l {
	case rowMajor:
		rs, cs = cols, 1
	case colMajor:
		rs, cs = 1, rows
	case rowPadded:
		rs, cs = cols+3, 1
	case colPadded:
		rs, cs = 1, rows+5
	case bothStrided:
		rs, cs = 2*cols+1, 2
	}
	size := off + 1
	if rows > 0 && cols > 0 {
		size += (rows-1)*rs + (cols-1)*cs
	}
	data := make([]float32, size+7)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	return Mat{Data: data, Off: off, RS: rs, CS: cs}
}

// gemmCase is one row of the table.
type gemmCase struct {
	m, n, k     int
	la, lb      layout
	alpha, beta float32
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d/A%v/B%v/alpha%g/beta%g", c.m, c.n, c.k, c.la, c.lb, c.alpha, c.beta)
}

// gemmCases is the table: every shape with every pair of layouts and
// alpha/beta pair for the small ones, fewer combinations for the large.
func gemmCases() []gemmCase {
	small := [][3]int{
		// Single rows, columns and inner size: the gemv paths.
		{1, 1, 1}, {1, 64, 64}, {64, 1, 64}, {1, 9, 13}, {11, 1, 21},
		// Around the micro-tile: MR-1, MR, MR+1 rows; NR-1, NR, NR+1 columns.
		{MR - 1, NR, 7}, {MR, NR, 3}, {MR + 1, NR, 9}, {MR, NR - 1, 5}, {MR, NR + 1, 5},
		{MR + 1, NR + 1, 1}, {2*MR + 1, 2*NR - 1, 33},
		// Blocks A is read in place for: few rows, or one or two panels.
		{4, 32, 13}, {4, 16, 32}, {3, 40, 7}, {9, 32, 30}, {30, 20, 17},
		// Tiny products: m*n dot products.
		{4, 4, 16}, {5, 3, 9}, {8, 8, 1}, {7, 9, 33},
		// Empty: nothing to do, or C = beta*C.
		{0, 5, 3}, {4, 0, 3}, {2, 3, 0},
	}
	large := [][3]int{
		{MR + 1, NR + 1, KC + 1}, {MC + 1, 2*NR + 3, 40}, {5, NC + 1, 9}, {13, 33, 2*KC + 3}, {2, 2, 600},
		// A last block of fewer than 2*MR rows after whole ones (512 rows:
		// 8 after seven blocks of MC), over pairs of panels.
		{2*MC + 8, 4*NR + 5, KC + 9},
	}
	layouts := []layout{rowMajor, colMajor, rowPadded, colPadded, bothStrided}
	scalars := [][2]float32{{1, 0}, {1, 1}, {0.5, 1}, {-2, 0.25}, {0, 0.5}}
	var cases []gemmCase
	for _, sh := range small {
		for _, la := range layouts {
			for _, lb := range layouts {
				for _, ab := range scalars {
					cases = append(cases, gemmCase{sh[0], sh[1], sh[2], la, lb, ab[0], ab[1]})
				}
			}
		}
	}
	for i, sh := range large {
		for j, l := range [][2]layout{{rowMajor, rowMajor}, {rowMajor, colMajor}, {colMajor, rowPadded}, {bothStrided, colPadded}} {
			ab := scalars[(i+j)%len(scalars)]
			cases = append(cases, gemmCase{sh[0], sh[1], sh[2], l[0], l[1], ab[0], ab[1]})
		}
	}
	return cases
}

// checked is C before a call, with what the call must leave there.
type checked struct {
	m, n, ldc int
	c         []float32 // C's storage, rows of ldc; n < ldc leaves a gap
	want      []float64 // m x n
	bound     []float64 // m x n: the allowed absolute error
}

// newChecked fills C with N(0, 1) values (a NaN at (0, 0) when beta is
// 0: it must not propagate) and computes alpha*A*B + beta*C in float64,
// where b(q, j) gives B's element. The bound is float32's worst case for
// a sum of k+2 terms (Higham's gamma bound), from the sum of the terms'
// magnitudes: the two implementations may round in any order.
func newChecked(r *rand.Rand, m, n, k int, alpha float32, a Mat, b func(q, j int) float64, beta float32) *checked {
	ck := &checked{m: m, n: n, ldc: n + 2}
	ck.c = make([]float32, m*ck.ldc+1)
	for i := range ck.c {
		ck.c[i] = float32(r.NormFloat64())
	}
	if beta == 0 && m > 0 && n > 0 {
		ck.c[0] = float32(math.NaN())
	}
	const u = 0x1p-24 // float32's unit roundoff
	gamma := float64(k+2) * u / (1 - float64(k+2)*u)
	ck.want = make([]float64, m*n)
	ck.bound = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, mag float64
			for q := 0; q < k; q++ {
				p := float64(a.at(i, q)) * b(q, j)
				s += p
				mag += math.Abs(p)
			}
			v := float64(alpha) * s
			mag *= math.Abs(float64(alpha))
			if beta != 0 {
				cb := float64(beta) * float64(ck.c[i*ck.ldc+j])
				v += cb
				mag += math.Abs(cb)
			}
			ck.want[i*n+j] = v
			ck.bound[i*n+j] = gamma*mag + 1e-30
		}
	}
	return ck
}

// verify checks C against the reference, and that the gap past n in
// each row and the slack after C are as they were.
func (ck *checked) verify(t *testing.T, before []float32, what string) {
	t.Helper()
	for i := 0; i < ck.m; i++ {
		for j := 0; j < ck.n; j++ {
			got := float64(ck.c[i*ck.ldc+j])
			want := ck.want[i*ck.n+j]
			if math.IsNaN(got) || math.Abs(got-want) > ck.bound[i*ck.n+j] {
				require.Failf(t, "wrong element", "%s: C(%d, %d) = %v, want %v within %.3g", what, i, j, got, want, ck.bound[i*ck.n+j])
			}
		}
		for j := ck.n; j < ck.ldc && i*ck.ldc+j < len(ck.c); j++ {
			require.Equal(t, before[i*ck.ldc+j], ck.c[i*ck.ldc+j], "%s: C(%d, %d) past n was written", what, i, j)
		}
	}
	last := len(ck.c) - 1
	require.Equal(t, before[last], ck.c[last], "%s: the element after C was written", what)
}

func (ck *checked) snapshot() []float32 { return append([]float32(nil), ck.c...) }

func matElem(b Mat) func(q, j int) float64 {
	return func(q, j int) float64 { return float64(b.at(q, j)) }
}

// TestConformanceGemm runs the table through Gemm, WithPrepackedB, and
// (alpha 1) WithPrepackedA and Cols, under every variant.
func TestConformanceGemm(t *testing.T) {
	cases := gemmCases()
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(1))
		sc := &Scratch{}
		for _, tc := range cases {
			a := newMat(r, tc.m, tc.k, tc.la)
			b := newMat(r, tc.k, tc.n, tc.lb)
			ck := newChecked(r, tc.m, tc.n, tc.k, tc.alpha, a, matElem(b), tc.beta)
			orig := ck.snapshot()
			run := func(what string, f func(c []float32)) {
				copy(ck.c, orig)
				f(ck.c)
				ck.verify(t, orig, tc.String()+"/"+what)
			}
			run("Gemm", func(c []float32) {
				Gemm(sc, tc.m, tc.n, tc.k, tc.alpha, a, b, nil, tc.beta, c, 0, ck.ldc)
			})
			run("Gemm/nilScratch", func(c []float32) {
				Gemm(nil, tc.m, tc.n, tc.k, tc.alpha, a, b, nil, tc.beta, c, 0, ck.ldc)
			})
			run("WithPrepackedB", func(c []float32) {
				WithPrepackedB(sc, tc.m, tc.alpha, a, PrepackB(tc.n, tc.k, b), tc.beta, c, 0, ck.ldc)
			})
			if tc.alpha != 1 {
				continue
			}
			run("WithPrepackedA", func(c []float32) {
				WithPrepackedA(sc, tc.n, PrepackA(tc.m, tc.k, a), b, nil, tc.beta, c, 0, ck.ldc)
			})
			// Cols in tiles of NR+1 columns (not a multiple of a panel, so
			// the tiles cut panels), each tile a view of B and C.
			run("Cols", func(c []float32) {
				const tile = NR + 1
				for j0 := 0; j0 < tc.n; j0 += tile {
					w := min(tile, tc.n-j0)
					bt := b
					bt.Off += j0 * b.CS
					Cols(sc, tc.m, w, tc.n, tc.k, a, bt, tc.beta, c, j0, ck.ldc)
				}
			})
		}
	})
}

// convCase is an implicit im2col source: input channels c, size
// d x h x w, kernel kd x kh x kw, and per-axis stride, padding and
// dilation (depth first). cl lays the input out channels-last (a
// channel stride of 1, a column stride of c).
type convCase struct {
	name          string
	c, d, h, w    int
	kd, kh, kw    int
	str, pad, dil [3]int
	cl            bool
	m             int // output channels (A's rows)
	alpha, beta   float32
}

// convCases covers each way packConv fills a panel: a whole panel
// inside one output row at stride 1, 2 and 3, panels running past the
// padding, panels crossing output rows (small images), a strided
// column (channels-last), depth, and blocks past KC rows.
func convCases() []convCase {
	one := [3]int{1, 1, 1}
	return []convCase{
		{name: "3x3/pad1", c: 3, d: 1, h: 20, w: 21, kd: 1, kh: 3, kw: 3, str: one, pad: [3]int{0, 1, 1}, dil: one, m: 8, alpha: 1},
		{name: "3x3/stride2", c: 2, d: 1, h: 19, w: 40, kd: 1, kh: 3, kw: 3, str: [3]int{1, 2, 2}, pad: [3]int{0, 1, 1}, dil: one, m: 7, alpha: 1, beta: 1},
		{name: "3x3/stride3", c: 2, d: 1, h: 13, w: 55, kd: 1, kh: 3, kw: 3, str: [3]int{1, 3, 3}, pad: [3]int{0, 1, 2}, dil: one, m: MR, alpha: 0.5},
		{name: "5x5/dil2/pad4", c: 3, d: 1, h: 9, w: 30, kd: 1, kh: 5, kw: 5, str: one, pad: [3]int{0, 4, 4}, dil: [3]int{1, 2, 2}, m: MR + 1, alpha: 1},
		{name: "small/rowsCross", c: 4, d: 1, h: 5, w: 6, kd: 1, kh: 3, kw: 3, str: one, pad: [3]int{0, 1, 1}, dil: one, m: 5, alpha: 1, beta: 0.25},
		{name: "1x7/stride2x1", c: 2, d: 1, h: 8, w: 24, kd: 1, kh: 1, kw: 7, str: [3]int{1, 2, 1}, pad: [3]int{0, 0, 3}, dil: one, m: 3, alpha: -2},
		{name: "channelsLast", c: 3, d: 1, h: 11, w: 20, kd: 1, kh: 3, kw: 3, str: one, pad: [3]int{0, 1, 1}, dil: one, cl: true, m: 9, alpha: 1},
		{name: "channelsLast/stride2", c: 2, d: 1, h: 9, w: 21, kd: 1, kh: 3, kw: 2, str: [3]int{1, 2, 2}, pad: [3]int{0, 1, 0}, dil: one, cl: true, m: 4, alpha: 1, beta: 1},
		{name: "3d", c: 2, d: 5, h: 6, w: 18, kd: 3, kh: 3, kw: 3, str: one, pad: one, dil: one, m: 5, alpha: 1},
		{name: "3d/stride2/dil", c: 2, d: 7, h: 7, w: 20, kd: 2, kh: 3, kw: 3, str: [3]int{2, 2, 1}, pad: [3]int{1, 0, 2}, dil: [3]int{2, 1, 2}, m: 3, alpha: 1},
		{name: "k>KC", c: 31, d: 1, h: 6, w: 17, kd: 1, kh: 3, kw: 3, str: one, pad: [3]int{0, 1, 1}, dil: one, m: 2*MR + 1, alpha: 1},
	}
}

// src builds the ConvSrc of a random input (storage with 2 elements of
// slack either side) and returns the im2col element function.
func (cc convCase) src(r *rand.Rand) (*ConvSrc, func(q, j int) float64, int, int) {
	out := func(size, k, str, pad, dil int) int { return (size+2*pad-dil*(k-1)-1)/str + 1 }
	od := out(cc.d, cc.kd, cc.str[0], cc.pad[0], cc.dil[0])
	oh := out(cc.h, cc.kh, cc.str[1], cc.pad[1], cc.dil[1])
	ow := out(cc.w, cc.kw, cc.str[2], cc.pad[2], cc.dil[2])
	data := make([]float32, 2+cc.c*cc.d*cc.h*cc.w+2)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	cv := &ConvSrc{Data: data, Off: 2, D: cc.d, H: cc.h, W: cc.w, KD: cc.kd, KH: cc.kh, KW: cc.kw,
		StrD: cc.str[0], StrH: cc.str[1], StrW: cc.str[2], PadD: cc.pad[0], PadH: cc.pad[1], PadW: cc.pad[2],
		DilD: cc.dil[0], DilH: cc.dil[1], DilW: cc.dil[2], OD: od, OH: oh, OW: ow}
	if cc.cl { // [d, h, w, c]
		cv.SC, cv.SW, cv.SH, cv.SD = 1, cc.c, cc.w*cc.c, cc.h*cc.w*cc.c
	} else { // [c, d, h, w]
		cv.SW, cv.SH, cv.SD, cv.SC = 1, cc.w, cc.h*cc.w, cc.d*cc.h*cc.w
	}
	elem := func(q, j int) float64 {
		ch, rem := q/(cc.kd*cc.kh*cc.kw), q%(cc.kd*cc.kh*cc.kw)
		kz, ki, kj := rem/(cc.kh*cc.kw), rem/cc.kw%cc.kh, rem%cc.kw
		z, y, x := j/(oh*ow), j/ow%oh, j%ow
		iz := z*cc.str[0] + kz*cc.dil[0] - cc.pad[0]
		iy := y*cc.str[1] + ki*cc.dil[1] - cc.pad[1]
		ix := x*cc.str[2] + kj*cc.dil[2] - cc.pad[2]
		if iz < 0 || iz >= cc.d || iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w {
			return 0
		}
		return float64(data[cv.Off+ch*cv.SC+iz*cv.SD+iy*cv.SH+ix*cv.SW])
	}
	return cv, elem, cc.c * cc.kd * cc.kh * cc.kw, od * oh * ow
}

// TestConformanceConv runs the im2col sources through Gemm and
// WithPrepackedA under every variant.
func TestConformanceConv(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(2))
		sc := &Scratch{}
		for _, cc := range convCases() {
			cv, elem, k, n := cc.src(r)
			for _, la := range []layout{rowMajor, colPadded} {
				a := newMat(r, cc.m, k, la)
				ck := newChecked(r, cc.m, n, k, cc.alpha, a, elem, cc.beta)
				orig := ck.snapshot()
				what := fmt.Sprintf("%s/A%v/%dx%dx%d", cc.name, la, cc.m, n, k)
				Gemm(sc, cc.m, n, k, cc.alpha, a, Mat{}, cv, cc.beta, ck.c, 0, ck.ldc)
				ck.verify(t, orig, what+"/Gemm")
				if cc.alpha == 1 {
					copy(ck.c, orig)
					WithPrepackedA(sc, n, PrepackA(cc.m, k, a), Mat{}, cv, cc.beta, ck.c, 0, ck.ldc)
					ck.verify(t, orig, what+"/WithPrepackedA")
				}
			}
		}
	})
}

// TestConformanceVector checks the vector helpers the kernels share
// (dot, four dots, gemv rows, axpy, the panel deal) at lengths around
// their 8- and 16-element steps, under every variant.
func TestConformanceVector(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(3))
		const u = 0x1p-24
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100} {
			x := make([]float32, n)
			y := make([]float32, n)
			var want, mag float64
			for i := range x {
				x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
				want += float64(x[i]) * float64(y[i])
				mag += math.Abs(float64(x[i]) * float64(y[i]))
			}
			bound := float64(n+1)*u*mag + 1e-30
			assert.InDelta(t, want, float64(dot(x, y)), bound, "dot n=%d", n)

			// Four rows of a, lda n+3, against x; then the same rows through
			// gemvRows with alpha 1.5 onto y.
			lda := n + 3
			a := make([]float32, 4*lda)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			var out [4]float32
			dot4(a, lda, x, &out)
			ys := []float32{0.5, -1, 2, 0}
			ys0 := append([]float32(nil), ys...)
			gemvRows(1.5, a, lda, x, ys)
			for row := 0; row < 4; row++ {
				var w, m float64
				for q := 0; q < n; q++ {
					p := float64(a[row*lda+q]) * float64(x[q])
					w += p
					m += math.Abs(p)
				}
				b := float64(n+2)*u*m + 1e-30
				assert.InDelta(t, w, float64(out[row]), b, "dot4 n=%d row %d", n, row)
				assert.InDelta(t, float64(ys0[row])+1.5*w, float64(ys[row]), 1.5*b+2*u*math.Abs(float64(ys0[row]))+1e-30, "gemvRows n=%d row %d", n, row)
			}

			y2 := append([]float32(nil), y...)
			Axpy(1.5, x, y2)
			for i := range y2 {
				w := float64(y[i]) + 1.5*float64(x[i])
				assert.InDelta(t, w, float64(y2[i]), 2*u*(math.Abs(float64(y[i]))+1.5*math.Abs(float64(x[i])))+1e-30, "axpy n=%d at %d", n, i)
			}

			// deal hands 16-element pieces of a row to panels stride apart.
			const stride = NR + 5
			row := make([]float32, n)
			for i := range row {
				row[i] = float32(i + 1)
			}
			pieces := n / NR
			dst := make([]float32, max(pieces*stride, 1))
			deal(dst, row, stride)
			for p := 0; p < pieces; p++ {
				assert.Equal(t, row[p*NR:p*NR+NR], dst[p*stride:p*stride+NR], "deal n=%d piece %d", n, p)
				for _, v := range dst[p*stride+NR : p*stride+stride] {
					assert.Zero(t, v, "deal n=%d wrote past piece %d", n, p)
				}
			}
		}
	})
}

// A Scratch keeps its buffers: a steady run of gemms through one
// allocates nothing, whatever path each takes.
func TestScratchSteadyAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	sc := &Scratch{}
	a := newMat(r, 70, 300, rowMajor)
	b := newMat(r, 300, 90, colMajor)
	cv, _, k, n := convCases()[0].src(r)
	w := newMat(r, 8, k, rowMajor)
	c := make([]float32, 70*max(90, n))
	run := func() {
		Gemm(sc, 70, 90, 300, 0.5, a, b, nil, 0, c, 0, 90)
		Gemm(sc, 4, 90, 300, 1, a, b, nil, 1, c, 0, 90)
		Gemm(sc, 8, n, k, 1, w, Mat{}, cv, 0, c, 0, n)
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(10, run))
}

// TestPackA6 packs six rows of every width up to a few groups past the
// assembly's 8-column step, with and without alpha, and checks each
// variant's panel element by element against the definition
// p[q*6+i] = alpha*row_i[q], and that nothing past the panel is written.
func TestPackA6(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	forEachVariant(t, func(t *testing.T) {
		for _, alpha := range []float32{1, -0.75} {
			for kc := 1; kc <= 41; kc++ {
				const rs, guard = 53, 7
				data := make([]float32, 3+5*rs+kc)
				for i := range data {
					data[i] = r.Float32()*2 - 1
				}
				p := make([]float32, kc*MR+guard)
				for i := range p {
					p[i] = float32(math.NaN())
				}
				packA6(p[:kc*MR], data, 3, rs, kc, alpha)
				for q := range kc {
					for i := range MR {
						require.Equal(t, alpha*data[3+i*rs+q], p[q*MR+i], "alpha %v kc %d: p[%d*6+%d]", alpha, kc, q, i)
					}
				}
				for _, v := range p[kc*MR:] {
					require.True(t, math.IsNaN(float64(v)), "alpha %v kc %d: written past the panel", alpha, kc)
				}
			}
		}
	})
}
