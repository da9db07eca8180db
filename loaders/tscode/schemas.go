package tscode

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/schemas"
)

var (
	schemaOnce sync.Once
	schemaMu   sync.RWMutex
	schemaByOp map[string][]*graph.Schema // "aten::add" -> overloads in order
	// custom marks the ops that got a schema through RegisterSchemas
	// (custom ops such as gosr::python_call): the compiler never folds them.
	custom map[string]bool
)

func loadSchemas() {
	schemaOnce.Do(func() {
		// PyTorch's schemas in registration order, which is the order
		// TorchScript tries overloads in.
		byOp := map[string][]*graph.Schema{}
		for _, line := range schemas.Lines() {
			s, err := graph.ParseSchema(line)
			if err != nil {
				continue
			}
			byOp[s.Name] = append(byOp[s.Name], s)
		}
		schemaMu.Lock()
		schemaByOp, custom = byOp, map[string]bool{}
		schemaMu.Unlock()
	})
}

// overloads returns the schemas of a qualified op name, in PyTorch's order
// (registered custom schemas after PyTorch's, in registration order).
// Schemas gosr's schema parser does not read (complex, RRef, ...) are
// left out: no gosr kernel takes those types anyway.
func overloads(op string) []*graph.Schema {
	loadSchemas()
	schemaMu.RLock()
	defer schemaMu.RUnlock()
	return schemaByOp[op]
}

// isCustom reports whether op's schemas came from RegisterSchemas.
func isCustom(op string) bool {
	loadSchemas()
	schemaMu.RLock()
	defer schemaMu.RUnlock()
	return custom[op]
}

// RegisterSchemas adds operator schemas ("gosr::python_call.s1a2b(str fn,
// Tensor x) -> Tensor") to the table calls are resolved against, so that
// serialized code calling a custom op (ops.gosr.python_call(...))
// compiles. Registration is process-wide and safe for concurrent use;
// registering a schema again is a no-op, while an overload name that is
// already registered with a different schema is an error. Either every
// line is added or none is.
func RegisterSchemas(lines ...string) error {
	loadSchemas()
	parsed := make([]*graph.Schema, 0, len(lines))
	for _, line := range lines {
		s, err := graph.ParseSchema(strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("register schema %q: %w", line, err)
		}
		if !strings.Contains(s.Name, "::") {
			return fmt.Errorf("register schema %q: the op name %q has no namespace (expected ns::name)", line, s.Name)
		}
		parsed = append(parsed, s)
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	// Check everything (against the table and each other) before adding.
	var add []*graph.Schema
	for i, s := range parsed {
		if old := findOverload(schemaByOp[s.Name], s.Name, s.Overload); old != nil {
			if old.String() != s.String() {
				return fmt.Errorf("register schema %q: overload %s is already registered as %q", lines[i], qualName(s), old.String())
			}
			continue
		}
		if old := findOverload(add, s.Name, s.Overload); old != nil {
			if old.String() != s.String() {
				return fmt.Errorf("register schema %q: overload %s is also given as %q", lines[i], qualName(s), old.String())
			}
			continue
		}
		add = append(add, s)
	}
	for _, s := range add {
		// Copy on write: readers may hold the old slice.
		prev := schemaByOp[s.Name]
		schemaByOp[s.Name] = append(prev[:len(prev):len(prev)], s)
		if !strings.HasPrefix(s.Name, "aten::") && !strings.HasPrefix(s.Name, "prim::") {
			custom[s.Name] = true
		}
	}
	return nil
}

// findOverload returns the schema of ss for op name.overload.
func findOverload(ss []*graph.Schema, name, overload string) *graph.Schema {
	for _, s := range ss {
		if s.Name == name && s.Overload == overload {
			return s
		}
	}
	return nil
}

func qualName(s *graph.Schema) string {
	if s.Overload == "" {
		return s.Name
	}
	return s.Name + "." + s.Overload
}

// unknownOpMessage explains a call of an op with no schema: outside aten
// and prim that is a custom op whose schema was never registered.
func unknownOpMessage(op string) string {
	if strings.HasPrefix(op, "aten::") || strings.HasPrefix(op, "prim::") {
		return fmt.Sprintf("unknown operator %s", op)
	}
	hint := "register its schema with tscode.RegisterSchemas before compiling"
	if strings.HasPrefix(op, "gosr::") {
		hint = "gosr fallback ops are declared in the torch.package's __gosr__/fallbacks.json manifest, which may be missing (export with scripts/gosr_fallback.py and load with loaders.OpenPackage(...).LoadScript)"
	}
	return fmt.Sprintf("unknown operator %s: custom op with no registered schema; %s", op, hint)
}

// KnownOp reports whether op (a qualified name, "aten::lstm") has a
// schema gosr can read: whether the compiler resolves calls to it.
func KnownOp(op string) bool { return len(overloads(op)) > 0 }
