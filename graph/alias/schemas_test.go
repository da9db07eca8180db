package alias

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every generated schema must parse, or the analysis falls back to the
// (more conservative) union of an op's overloads.
func TestGeneratedSchemasParse(t *testing.T) {
	bad := 0
	for name, ms := range annotatedSchemas {
		for _, m := range ms {
			if parseSchema(m.schema) == nil {
				bad++
				t.Logf("%s: %s", name, m.schema)
			}
		}
	}
	require.Zero(t, bad)
}
