package staticruntime

import "github.com/gosr/gosr/ivalue"

// defaultsCover reports whether the inputs not given (positionally or by
// name) all have default values, as a TorchScript method's call
// forward(images) with targets=None does.
func (m *StaticModule) defaultsCover(args []ivalue.IValue, kwargs map[string]ivalue.IValue) bool {
	named := 0
	for i := len(args); i < len(m.inputs); i++ {
		if _, ok := kwargs[m.argNames[i]]; ok {
			named++
			continue
		}
		if i >= len(m.defaults) || m.defaults[i] == nil {
			return false
		}
	}
	return named == len(kwargs)
}
