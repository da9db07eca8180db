package graph

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseAllTorchSchemas parses every schema PyTorch 1.13 registers
// (testdata/schemas.txt, from scripts/make_ir_samples.py).
func TestParseAllTorchSchemas(t *testing.T) {
	b, err := os.ReadFile("testdata/schemas.txt")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Greater(t, len(lines), 1000)
	var failed []string
	for _, l := range lines {
		s, err := ParseSchema(l)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		if !strings.HasPrefix(l, s.Name) || !strings.Contains(s.Name, "::") {
			failed = append(failed, l+": bad name "+s.Name)
		}
	}
	if len(failed) > 100 {
		failed = append(failed[:100], "...")
	}
	require.Empty(t, failed, "%d schemas failed", len(failed))
}
