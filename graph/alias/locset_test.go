package alias

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func elems(s locSet) []loc {
	var out []loc
	for l := range s.all() {
		out = append(out, l)
	}
	return out
}

// TestLocSetAgainstSlices checks the treap against sorted slices on
// random sets, and the property the analysis's fixpoint relies on: a
// union that adds nothing returns its first operand itself.
func TestLocSetAgainstSlices(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var sets []locSet
	var models [][]loc
	for i := 0; i < 150; i++ {
		var s locSet
		var m []loc
		switch {
		case i < 20 || rng.Intn(3) == 0:
			for k := rng.Intn(40); k > 0; k-- {
				l := loc(rng.Intn(100))
				s = s.add(l)
				m = append(m, l)
			}
		default:
			a, b := rng.Intn(len(sets)), rng.Intn(len(sets))
			s = union(sets[a], sets[b])
			m = append(slices.Clone(models[a]), models[b]...)
		}
		slices.Sort(m)
		m = slices.Compact(m)
		require.Equal(t, m, elems(s), "set %d", i)
		require.Equal(t, int32(len(m)), s.len())
		for l := loc(0); l < 100; l++ {
			if slices.Contains(m, l) != s.has(l) {
				t.Fatalf("set %d: has(%d) = %v", i, l, s.has(l))
			}
		}
		sets, models = append(sets, s), append(models, m)
	}
	for i := range sets {
		for j := range sets {
			a, b := sets[i], sets[j]
			u := union(a, b)
			ab := slices.ContainsFunc(models[i], func(l loc) bool { return slices.Contains(models[j], l) })
			assert.Equal(t, ab, intersects(a, b), "intersects %d %d", i, j)
			sub := !slices.ContainsFunc(models[j], func(l loc) bool { return !slices.Contains(models[i], l) })
			if sub {
				assert.Same(t, a, u, "union(%d, %d) adds nothing", i, j)
			} else {
				assert.NotSame(t, a, u, "union(%d, %d) adds something", i, j)
			}
		}
	}
}

// TestLocSetSharing: the same set built in different orders has the
// same shape, and a chain of growing sets shares its nodes.
func TestLocSetSharing(t *testing.T) {
	var a, b locSet
	for l := loc(0); l < 64; l++ {
		a = a.add(l)
		b = b.add(63 - l)
	}
	var shape func(x, y *lnode) bool
	shape = func(x, y *lnode) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.key == y.key && shape(x.left, y.left) && shape(x.right, y.right)
	}
	assert.True(t, shape(a, b))

	nodes := map[*lnode]bool{}
	var count func(x *lnode)
	count = func(x *lnode) {
		if x != nil && !nodes[x] {
			nodes[x] = true
			count(x.left)
			count(x.right)
		}
	}
	var s locSet
	const n = 4096
	for l := loc(0); l < n; l++ {
		s = union(s, single(l))
		count(s)
	}
	// Path copying: about log n new nodes per step, not n.
	assert.Less(t, len(nodes), 40*n)
}
