package perflab_test

import (
	"fmt"

	"github.com/perflab/perflab"
)

// sumCase is the shared state of one case: the numbers to add up, built
// by Variant.New outside the timed region.
type sumCase struct {
	xs      []int
	formula bool
}

// NewWorker builds one goroutine's state, also outside the timed region.
func (c *sumCase) NewWorker(id int) perflab.Worker { return &sumWorker{c: c} }

type sumWorker struct {
	c *sumCase
	// sink keeps the result alive: the compiler may delete a loop whose
	// result nobody reads, and the variant would measure nothing.
	sink int
}

// Run is the timed loop: n operations, as `for range b.N`.
func (w *sumWorker) Run(n int) {
	total := 0
	for range n {
		if w.c.formula {
			total += len(w.c.xs) * (len(w.c.xs) - 1) / 2
			continue
		}
		for _, x := range w.c.xs {
			total += x
		}
	}
	w.sink = total
}

func newSum(formula bool) func(perflab.Params) (perflab.Case, error) {
	return func(p perflab.Params) (perflab.Case, error) {
		xs := make([]int, p.Int("n"))
		for i := range xs {
			xs[i] = i
		}
		return &sumCase{xs: xs, formula: formula}, nil
	}
}

// A scenario is a question, its variants and a parameter matrix. A
// package registers it in init; a main built with perflabcmd runs it
// (`go run . run example-sum`), and `perflab new` writes one that builds.
// Here the matrix is expanded and each case run once by hand, as the
// runner does with its timing around Run.
func Example() {
	s := &perflab.Scenario{
		Name: "example-sum",
		Doc:  "sum 0..n-1: a loop vs the formula",
		Params: []perflab.Param{
			{Name: "n", Doc: "how many numbers", Kind: perflab.IntParam, Default: []string{"10"}, Min: 1, Max: 1 << 20},
		},
		Threads: []int{1, 4},
		// The frames that are the useful work, for the time budget.
		Work: []string{`^github\.com/perflab/perflab_test\.`},
		Variants: []perflab.Variant{
			{Name: "loop", Doc: "add them up", New: newSum(false)},
			{Name: "formula", Doc: "n(n-1)/2", New: newSum(true)},
		},
	}
	perflab.Register(s) // in init, in a scenario's package

	cases, err := s.Matrix(perflab.Selection{Params: map[string][]string{"n": {"10", "1k"}}, Threads: []int{1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cases {
		v, _ := s.Variant(c.Variant)
		cs, _ := v.New(c.Params)
		w := cs.NewWorker(0)
		w.Run(1)
		fmt.Println(s.CaseName(c), w.(*sumWorker).sink)
	}
	// Output:
	// variant=loop/n=10/threads=1 45
	// variant=loop/n=1k/threads=1 523776
	// variant=formula/n=10/threads=1 45
	// variant=formula/n=1k/threads=1 523776
}
