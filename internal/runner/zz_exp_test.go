package runner

import (
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"testing"
	"time"

	"github.com/perflab/perflab"
)

func TestZZTracerExp(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	s, _ := perflab.Lookup("cipher-cache")
	specs, err := s.Matrix(perflab.Selection{Variants: []string{"mutex"}, Params: map[string][]string{"keys": {"1024"}, "key": {"ssk"}}, Threads: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	spec := specs[0]
	c := &liveCase{spec: spec, name: s.CaseName(spec)}
	r := &Runner{Scenario: s, Progress: &quietProgress{}, Opts: Options{Time: 100 * time.Millisecond, Warmup: 100 * time.Millisecond}}
	r.Opts.Defaults()
	r.Opts.ProfileTime = time.Second
	if err := r.setupCase(c); err != nil {
		t.Fatal(err)
	}
	t.Log(c.name)
	modes := []string{"off", "window", "traceFile", "traceDiscard", "cpuOnly"}
	res := map[string][]float64{}
	var traceBytes []float64
	for round := 0; round < 7; round++ {
		for k := range modes {
			m := modes[(k+round)%len(modes)]
			var ops int64
			var el time.Duration
			switch m {
			case "off":
				ops, el, _ = r.runFor(c, r.Opts.ProfileTime)
			case "window":
				tw := r.tracedWindow(c, true)
				if st, err := tw.trace.Stat(); err == nil {
					traceBytes = append(traceBytes, float64(st.Size())/tw.elapsed.Seconds())
				}
				if round == 3 {
					os.WriteFile("/tmp/zz-window.cpu.pb.gz", tw.cpu.Bytes(), 0o644)
				}
				tw.close()
				ops, el = tw.ops, tw.elapsed
			case "traceFile":
				f, _, _ := createTraceFile()
				trace.Start(f)
				ops, el, _ = r.runFor(c, r.Opts.ProfileTime)
				trace.Stop()
				f.Close()
			case "traceDiscard":
				trace.Start(io.Discard)
				ops, el, _ = r.runFor(c, r.Opts.ProfileTime)
				trace.Stop()
			case "cpuOnly":
				pprof.StartCPUProfile(io.Discard)
				ops, el, _ = r.runFor(c, r.Opts.ProfileTime)
				pprof.StopCPUProfile()
			}
			res[m] = append(res[m], float64(ops)/el.Seconds())
		}
	}
	med := func(x []float64) float64 { y := append([]float64(nil), x...); sort.Float64s(y); return y[len(y)/2] }
	for _, m := range modes {
		ratios := []float64{}
		for i := range res[m] {
			ratios = append(ratios, res[m][i]/res["off"][i])
		}
		t.Logf("%-13s ops/s %.0f  ratio-to-off median %.3f  %v", m, med(res[m]), med(ratios), ratios)
	}
	t.Logf("trace MB/s %.1f", med(traceBytes)/1e6)
}
