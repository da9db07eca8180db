package alias

import (
	"fmt"
	"sort"
	"strings"
)

// dumpTable writes the schema table as text, one line per overload or op,
// in a fixed order (the maps' order is random): annotated ops by name,
// each one's overloads in PyTorch's registration order, then the fresh
// and the Generator-taking op names.
func dumpTable(annotated map[string][]opAlias, fresh, generator map[string]bool) string {
	var b strings.Builder
	for _, name := range sortedKeys(annotated) {
		for _, m := range annotated[name] {
			fmt.Fprintf(&b, "annotated %s | %s | points=%v elems=%v wild=%v writes=%v escapes=%v\n",
				name, m.schema, m.points, m.elems, m.wild, m.writes, m.escapes)
		}
	}
	for _, name := range sortedKeys(fresh) {
		if fresh[name] {
			fmt.Fprintf(&b, "fresh %s\n", name)
		}
	}
	for _, name := range sortedKeys(generator) {
		if generator[name] {
			fmt.Fprintf(&b, "generator %s\n", name)
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
