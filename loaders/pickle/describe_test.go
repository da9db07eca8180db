package pickle

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/hostile/gen"
)

func TestDescribe(t *testing.T) {
	d := &Dict{}
	require.NoError(t, d.Set("a", int64(1)))
	require.NoError(t, d.Set(int64(2), Tuple{"b"}))
	big1 := new(big.Int).Lsh(big.NewInt(1), 100)
	cases := []struct {
		v    any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{int64(-7), "-7"},
		{big1, "1267650600228229401496703205376"},
		{new(big.Int).Lsh(big.NewInt(1), 1000), "<int of 1001 bits>"},
		{2.5, "2.5"},
		{"storage", `"storage"`},
		{strings.Repeat("x", 100), `"` + strings.Repeat("x", 40) + `..."`},
		{[]byte("ab"), `b"ab"`},
		{Tuple{}, "()"},
		{Tuple{int64(1)}, "(1,)"},
		{Tuple{"storage", Global{"torch", "FloatStorage"}, "0", "cpu", int64(4)}, `("storage", torch.FloatStorage, "0", "cpu", 4)`},
		{&List{Items: []any{int64(1), nil}}, "[1, None]"},
		{&List{Items: make([]any, 1000)}, "[None, None, None, None, None, None, ... 1000 items]"},
		{d, `{"a": 1, 2: ("b",)}`},
		{&Set{}, "set()"},
		{&Set{Items: []any{int64(1)}, Frozen: true}, "frozenset({1})"},
		{[]int{2, 3}, "[2, 3]"},
		{make([]int, 100), "[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... 100 items]"},
		{Tuple{Tuple{Tuple{Tuple{Tuple{Tuple{}}}}}}, "(((((...),),),),)"},
		{Tuple{Tuple{Tuple{Tuple{Tuple{}}}}}, "(((((),),),),)"},
		{struct{}{}, "<struct {}>"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Describe(tc.v))
	}
}

// The values of the campaign's crash: fmt's %v of them overflowed the
// stack (deep) or would print 2^60 tuples (shared).
func TestDescribeHostileValues(t *testing.T) {
	deep, err := Unpickle(gen.DeepTuplePickle(1_000_000, "value"), nil)
	require.NoError(t, err)
	assert.Equal(t, "(((((...),),),),)", Describe(deep))

	shared, err := Unpickle(gen.SharedTuplePickle(60), nil)
	require.NoError(t, err)
	s := Describe(shared)
	assert.LessOrEqual(t, len(s), 210)
	assert.True(t, strings.HasPrefix(s, "(((((...), (...)), ((...), (...))), "), s)

	wide := make(Tuple, 1<<20)
	for i := range wide {
		wide[i] = strings.Repeat("y", 1000)
	}
	assert.LessOrEqual(t, len(Describe(&List{Items: []any{wide, wide}})), 210)
}

// bytearray's error names the bad item: a deep tuple there once crashed
// the process.
func TestBytearrayOfDeepTuple(t *testing.T) {
	_, err := Unpickle(gen.DeepTuplePickle(1_000_000, "bytearray"), &Options{Global: BuiltinGlobal})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bytearray: item 0 is (((((...),),),),), expected an int in 0..255")
}
