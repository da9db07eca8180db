package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

func BenchmarkDecodeHTTP(b *testing.B) {
	data := make([]float64, 64)
	for i := range data {
		data[i] = float64(float32(i)*0.0123456 - 0.3)
	}
	body, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": []int{1, 64}, "data": data}}})
	s := fuzzServer()
	r, _ := http.NewRequest("POST", "/v2/models/m/infer", bytes.NewReader(body))
	b.ReportAllocs()
	for range b.N {
		if _, err := s.decodeHTTP(r, body); err != nil {
			b.Fatal(err)
		}
	}
}
