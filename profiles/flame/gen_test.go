package flame

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// genProfile builds the yardstick profile of issue 3 in memory: n unique
// stacks of depth 10–60 with Zipf-like counts and long generic Go names.
// Stacks are random walks down a synthetic call graph whose branches are
// also chosen Zipf-like, so hot paths share long prefixes as in real
// programs, and function names recur at different depths.
func genProfile(n int, seed uint64) *profile.Profile {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	pkgs := []string{"api", "storage/kv", "internal/codec", "internal/cache", "rpc/transport", "search/index", "auth/session", "telemetry/export"}
	kinds := []string{"Handler", "Store", "Codec", "Cache", "Conn", "Index", "Session", "Exporter"}
	const pool = 4000
	names := make([]string, pool)
	for i := range names {
		pkg := pkgs[i%len(pkgs)]
		kind := kinds[(i/len(pkgs))%len(kinds)]
		switch i % 4 {
		case 0:
			names[i] = fmt.Sprintf("github.com/acme/platform/%s.(*%s[go.shape.struct { Key string; Value []uint8 }]).ProcessRequestWithRetries%d", pkg, kind, i)
		case 1:
			names[i] = fmt.Sprintf("github.com/acme/platform/%s.(*%s).handleIncomingMessageBatch%d.func%d", pkg, kind, i, i%7+1)
		case 2:
			names[i] = fmt.Sprintf("github.com/acme/platform/%s.encodeValue[go.shape.*github.com/acme/platform/%s.Record,go.shape.int64]%d", pkg, pkg, i)
		default:
			names[i] = fmt.Sprintf("runtime.generatedHelperFunction%d", i)
		}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	locs := make([]*profile.Location, pool)
	for i := range names {
		fn := &profile.Function{ID: uint64(i + 1), Name: names[i], SystemName: names[i], Filename: "/src/acme/platform/file.go"}
		p.Function = append(p.Function, fn)
		locs[i] = &profile.Location{ID: uint64(i + 1), Address: 0x400000 + uint64(i)*64, Line: []profile.Line{{Function: fn, Line: int64(i%500 + 1)}}}
		p.Location = append(p.Location, locs[i])
	}
	// zipf returns a branch index in [0, k): 0 most often.
	zipf := func(k int) int {
		u := rng.Float64()
		return int(float64(k) * u * u * u)
	}
	seen := make(map[string]bool, n)
	var key strings.Builder
	for len(p.Sample) < n {
		depth := 10 + rng.IntN(51)
		stack := make([]*profile.Location, depth)
		node := uint64(1)
		key.Reset()
		for d := 0; d < depth; d++ {
			node = node*6364136223846793005 + uint64(zipf(6)) + 1442695040888963407
			f := int((node >> 33) % pool)
			if d == 0 {
				f = 3 // one root, like runtime.goexit/main
			}
			stack[depth-1-d] = locs[f] // leaf first
			fmt.Fprintf(&key, "%d;", f)
		}
		if seen[key.String()] {
			continue
		}
		seen[key.String()] = true
		rank := float64(len(p.Sample) + 1)
		count := int64(math.Max(1, 2e5/math.Pow(rank, 0.9)))
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{count, count * 10_000_000}})
	}
	return p
}

var genOut = flag.String("gen", "", "write the generated benchmark profile to this file and stop (see -gen-stacks)")
var genStacks = flag.Int("gen-stacks", 100000, "unique stacks in the profile written by -gen")

// TestGenerate writes the benchmark profile for measuring the command line
// against `go tool pprof -raw`:
//
//	go test ./profiles/flame -run TestGenerate -gen /tmp/big.pb.gz
func TestGenerate(t *testing.T) {
	if *genOut == "" {
		t.Skip("no -gen file")
	}
	f, err := os.Create(*genOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := genProfile(*genStacks, 1).Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
