package parallel

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each part takes its own contiguous share first, in order; a part
// alone takes every chunk, its own then the others'; parts taking at
// once get every chunk exactly once; a new Reset deals afresh.
func TestChunks(t *testing.T) {
	var c Chunks
	c.Reset(10, 2)
	for _, want := range []int{0, 1, 2, 3, 4} {
		ch, ok := c.Take(0)
		require.True(t, ok)
		assert.Equal(t, want, ch, "part 0's own share, in order")
	}
	ch, ok := c.Take(1)
	require.True(t, ok)
	assert.Equal(t, 5, ch, "part 1's share begins where part 0's ends")
	var rest []int
	for ch, ok := c.Take(0); ok; ch, ok = c.Take(0) {
		rest = append(rest, ch)
	}
	assert.Equal(t, []int{6, 7, 8, 9}, rest, "part 0 takes what part 1 left")
	_, ok = c.Take(1)
	assert.False(t, ok)

	for _, tc := range []struct{ count, parts int }{{1, 4}, {7, 3}, {100, 8}, {5, 1}, {200, 100}} {
		c.Reset(tc.count, tc.parts)
		var mu sync.Mutex
		var got []int
		var wg sync.WaitGroup
		for i := range tc.parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ch, ok := c.Take(i); ok; ch, ok = c.Take(i) {
					mu.Lock()
					got = append(got, ch)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(got)
		want := make([]int, tc.count)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, got, "%d chunks, %d parts: each once", tc.count, tc.parts)
	}
}
