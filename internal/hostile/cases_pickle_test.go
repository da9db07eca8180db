package hostile

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/loaders/pickle"
)

func unpickle(t *testing.T, b []byte) any {
	t.Helper()
	v, err := pickle.Unpickle(b, nil)
	require.NoError(t, err)
	return v
}

// depthOf counts how deep single-item tuples, lists and dicts nest.
func depthOf(v any) int {
	n := 0
	for {
		switch x := v.(type) {
		case pickle.Tuple:
			if len(x) == 0 {
				return n + 1
			}
			v = x[0]
		case *pickle.List:
			if len(x.Items) == 0 {
				return n + 1
			}
			v = x.Items[0]
		case *pickle.Dict:
			if x.Len() == 0 {
				return n + 1
			}
			v = x.Values[0]
		default:
			return n
		}
		n++
	}
}

// The hand-written pickles mean what the cases say they mean.
func TestPickleWriter(t *testing.T) {
	plain := func(b []byte) []byte { return append(append([]byte{0x80, 2}, b...), pkStop) }
	assert.Equal(t, pickle.Tuple{int64(1), int64(-2), int64(1 << 40)}, unpickle(t, newPK().ints(1, -2, 1<<40).bytes()))
	neg := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 100))
	assert.Equal(t, 0, neg.Cmp(unpickle(t, newPK().bigInt(neg).bytes()).(*big.Int)))
	assert.Equal(t, "héllo", unpickle(t, newPK().str("héllo").bytes()))
	for _, n := range []int{0, 1, 5} {
		assert.Equal(t, n+1, depthOf(unpickle(t, plain(pkDeepTuple(n)))), "tuple %d", n)
		assert.Equal(t, n+1, depthOf(unpickle(t, plain(pkDeepList(n)))), "list %d", n)
		assert.Equal(t, n+1, depthOf(unpickle(t, plain(pkDeepDict(n)))), "dict %d", n)
	}
	dag := unpickle(t, plain(pkTupleDAG(3))).(pickle.Tuple)
	assert.Len(t, dag, 2)
	assert.Equal(t, 4, depthOf(dag))
	assert.Equal(t, dag[0], dag[1])
	ld := unpickle(t, plain(pkListDAG(3))).(*pickle.List)
	assert.Len(t, ld.Items, 2)
	assert.Same(t, ld.Items[0], ld.Items[1])
}

// The generated archives load and run: a case that fails comes from its
// hostile part, not a broken generator.
func TestGeneratedArchivesRun(t *testing.T) {
	outs, err := runArchive(constArchive(constantsOf(c0)))
	require.NoError(t, err)
	require.NoError(t, expectTensor(outs, x4()))
	outs, err = runArchive(dataArchive(moduleWith("a", func(p *pk) { p.ints(1, 2) })))
	require.NoError(t, err)
	require.NoError(t, want(1, 0, 3, 0)(outs))
	vs, err := runSave(saveArchive(newPK().tensor("0", 16, 0, []int64{1, 4}, []int64{4, 1}).bytes()))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 4}, vs[0].Tensor().Sizes())
}
