package staticruntime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestChooseSplit: the whole-run check keeps the choice that splits
// fewer nodes unless one that splits more is faster by splitMargin
// (see [Split per node]); choices are per-node, all-split, all-alone.
func TestChooseSplit(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, c := range []struct {
		name  string
		whole [3]time.Duration
		split [3]int
		want  string
	}{
		{"all-split clearly faster", [3]time.Duration{ms(90), ms(60), ms(100)}, [3]int{5, 10, 0}, "all-split"},
		{"all-split within the margin of all-alone", [3]time.Duration{ms(101), ms(99), ms(100)}, [3]int{5, 10, 0}, "all-alone"},
		{"per-node beats all-alone, all-split within its margin", [3]time.Duration{ms(80), ms(79), ms(100)}, [3]int{5, 10, 0}, "per-node"},
		{"all-alone fastest", [3]time.Duration{ms(110), ms(120), ms(100)}, [3]int{5, 10, 0}, "all-alone"},
		{"per-node splits nothing: as all-alone, the faster of the two", [3]time.Duration{ms(99), ms(120), ms(100)}, [3]int{0, 10, 0}, "per-node"},
		{"per-node splits everything: as all-split", [3]time.Duration{ms(60), ms(61), ms(100)}, [3]int{10, 10, 0}, "per-node"},
	} {
		got := splitChoiceNames[chooseSplit(c.whole, c.split)]
		require.Equal(t, c.want, got, c.name)
	}
}
