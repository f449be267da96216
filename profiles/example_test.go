package profiles_test

import (
	"fmt"
	"os"

	"github.com/perflab/perflab/profiles"
)

// A scenario's work patterns make its own frames Work; the runtime's frames
// are classified by the built-in rules, by context.
func ExampleRules_Classify() {
	r, err := profiles.DefaultRules().WithWork(`^crypto/internal/fips140/sha256\.`)
	if err != nil {
		panic(err)
	}
	stacks := [][]string{ // leaf first
		{"crypto/internal/fips140/sha256.blockSHANI", "crypto/sha256.Sum256", "main.worker"},
		{"runtime.gopark", "runtime.goparkunlock", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock", "main.worker"},
		{"runtime.gopark", "runtime.goparkunlock", "runtime.semacquire1", "sync.runtime_SemacquireWaitGroup", "sync.(*WaitGroup).Wait", "main.main"},
		{"runtime.lock2", "runtime.lock", "runtime.(*sweepLocked).sweep", "runtime.sweepone", "runtime.bgsweep"},
		{"runtime.memmove", "runtime.growslice", "main.worker"},
		{"runtime.mapaccess1_fast64", "main.worker"},
	}
	for _, s := range stacks {
		fmt.Println(r.Classify(s), s[0])
	}
	// Output:
	// work crypto/internal/fips140/sha256.blockSHANI
	// lock runtime.gopark
	// wait runtime.gopark
	// gc runtime.lock2
	// alloc runtime.memmove
	// other runtime.mapaccess1_fast64
}

// Breakdown turns a wall-clock profile into a time budget.
func ExampleBreakdown() {
	f, err := os.Open("testdata/real/cpu.pb.gz")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	p, err := profiles.Read(f)
	if err != nil {
		panic(err)
	}
	r, _ := profiles.DefaultRules().WithWork(`^crypto/`)
	idx, _ := profiles.SampleIndex(p, "cpu")
	by, total := profiles.Breakdown(p, idx, r)
	for _, c := range profiles.Categories {
		fmt.Printf("%-5s %4.1f%%\n", c, 100*float64(by[c])/float64(total))
	}
	// Output:
	// work  22.9%
	// lock   4.1%
	// wait   2.1%
	// alloc 23.6%
	// gc    25.7%
	// sched 12.0%
	// other  9.6%
}
