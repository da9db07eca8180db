package schemas

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLines(t *testing.T) {
	ls := Lines()
	require.Greater(t, len(ls), 4000)
	for _, l := range ls {
		require.NotEmpty(t, l)
		require.NotEqual(t, byte('#'), l[0], "the version line is not a schema")
		require.Contains(t, l, "::", l)
		require.Contains(t, l, ") -> ", l)
	}
	// Registration order, not sorted: aten::add's first overload is .Tensor.
	var adds []string
	for _, l := range ls {
		if strings.HasPrefix(l, "aten::add.") {
			adds = append(adds, l)
		}
	}
	require.NotEmpty(t, adds)
	assert.Equal(t, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", adds[0])
	// torchvision's ops are in the list.
	assert.Contains(t, ls, "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
}

// A caller writing into its slice does not change what others get.
func TestLinesIsACopy(t *testing.T) {
	a := Lines()
	first := a[0]
	a[0] = "changed"
	assert.Equal(t, first, Lines()[0])
}
