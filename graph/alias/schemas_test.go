package alias

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
)

// Every annotated schema must parse, or the analysis falls back to the
// (more conservative) union of an op's overloads.
func TestAnnotatedSchemasParse(t *testing.T) {
	bad := 0
	annotated, _, _ := fullTable()
	for name, ms := range annotated {
		for _, m := range ms {
			if _, err := graph.ParseSchema(m.schema); err != nil {
				bad++
				t.Logf("%s: %v", name, err)
			}
		}
	}
	require.Zero(t, bad)
}
