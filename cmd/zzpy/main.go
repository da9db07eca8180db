package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gosr/gosr/pyfallback"
)

func main() {
	k, _ := strconv.Atoi(os.Args[1])
	m, err := pyfallback.NewManager(3)
	if err != nil {
		panic(err)
	}
	vocab, _ := os.ReadFile("scripts/pyfallback_src/textpkg/vocab.py")
	tok, _ := os.ReadFile("scripts/pyfallback_src/textpkg/tok.py")
	src := string(vocab) + "\n" + string(tok)
	src = "import re, unicodedata\n" + src
	src = replaceAll(src, "from .vocab import VOCAB", "")
	setup := src + `
batch = ["Return a new list containing all items from the iterable in ascending order.",
     "A custom key function can be supplied to customize the sort order, and the reverse flag can be set to request the result in descending order.",
     "If the file cannot be opened, an error is raised; the default encoding is platform dependent.",
     "Raise a ValueError if the value is not present, unless a default is given."]
def loop(k):
    for _ in range(k):
        tokenize(batch)
`
	ctx := context.Background()
	for i := range 3 {
		s, _ := m.AcquireHint(ctx, i)
		if err := s.Exec(ctx, setup); err != nil {
			panic(err)
		}
		s.Release()
	}
	code := fmt.Sprintf("loop(%d)", k)
	rate := func(ids []int) float64 {
		var wg sync.WaitGroup
		rs := make([]float64, len(ids))
		for g, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				n := 0
				for time.Since(t0) < 300*time.Millisecond {
					s, _ := m.AcquireHint(ctx, id)
					if err := s.Exec(ctx, code); err != nil {
						panic(err)
					}
					s.Release()
					n += k
				}
				rs[g] = float64(n) / time.Since(t0).Seconds()
			}()
		}
		wg.Wait()
		t := 0.0
		for _, r := range rs {
			t += r
		}
		return t
	}
	var r1, r2 []float64
	for range 15 {
		a := rate([]int{0})
		b := rate([]int{1, 2})
		r1 = append(r1, a)
		r2 = append(r2, b)
	}
	ratios := make([]float64, len(r1))
	for i := range r1 {
		ratios[i] = r2[i] / r1[i]
	}
	fmt.Printf("k=%d one %.0f calls/s (%.1f us), two %.0f, paired ratio median %.2f\n", k, med(r1), 1e6/med(r1), med(r2), med(ratios))
	for _, in := range m.Interpreters() {
		fmt.Printf("  interp %d: %d calls, %.1f us each\n", in.ID, in.Calls, float64(in.Busy.Microseconds())/float64(in.Calls))
	}
}

func med(x []float64) float64 { s := append([]float64(nil), x...); sort.Float64s(s); return s[len(s)/2] }

func replaceAll(s, a, b string) string {
	for {
		i := indexOf(s, a)
		if i < 0 {
			return s
		}
		s = s[:i] + b + s[i+len(a):]
	}
}
func indexOf(s, a string) int {
	for i := 0; i+len(a) <= len(s); i++ {
		if s[i:i+len(a)] == a {
			return i
		}
	}
	return -1
}
