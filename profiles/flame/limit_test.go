package flame

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/profiles"
)

var (
	limit       = flag.Bool("limit", false, "measure drawing generated profiles against `go tool pprof -raw` in one run (make bench)")
	limitStacks = flag.String("limit-stacks", "100000,1000000", "with -limit: unique stacks of the generated profiles")
	limitRounds = flag.Int("limit-rounds", 3, "with -limit: rounds, each running every command once")
)

// TestDrawLimit is issue 13's yardstick: `perflab flame -o x.svg` and
// `-o x.html` on generated profiles of 100k and 1M unique stacks, as ratios
// against pprof's own binary (`$(go tool -n pprof) -raw`, which decodes the
// same file and prints it) measured alternately in one run, since the
// machine's load moves every absolute figure. The drawing runs in a child
// process (this test binary, TestDrawChild) so that its peak RSS is its
// own (a child's peak includes this parent's RSS at fork, a few tens of
// MB, as it does for pprof). It fails when a target is missed.
//
// Targets: 100k stacks ≤ 0.40× pprof's wall time (issue 13). 1M stacks
// (issue 26): ≤ 5 s and ≤ 1.2 GB on the 2-core machine, where pprof -raw
// of the 1M-stack file took 15.2 s (load 1.6; 14.5 s user, 7.8 s system,
// 1.86 GB): 5 s is 0.33× pprof's wall time, which holds as the load
// moves both, while the peak RSS it does not move stays absolute.
//
//	go test ./profiles/flame -run TestDrawLimit -limit -v
func TestDrawLimit(t *testing.T) {
	if !*limit {
		t.Skip("run with -limit (make bench)")
	}
	out, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if err != nil {
		t.Fatalf("go tool -n pprof: %v", err)
	}
	pprof := strings.TrimSpace(string(out))
	dir := filepath.Join(os.TempDir(), "perflab-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, field := range strings.Split(*limitStacks, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			t.Fatalf("-limit-stacks: %v", err)
		}
		file := filepath.Join(dir, fmt.Sprintf("stacks-%d.pb.gz", n))
		if _, err := os.Stat(file); err != nil {
			start := time.Now()
			if err := writeGenerated(file, n); err != nil {
				t.Fatal(err)
			}
			t.Logf("generated %s in %v", file, time.Since(start).Round(time.Second))
		}
		fi, _ := os.Stat(file)
		cmds := []struct {
			name string
			cmd  func() *exec.Cmd
		}{
			{"pprof -raw", func() *exec.Cmd { return exec.Command(pprof, "-raw", file) }},
			{"flame svg", func() *exec.Cmd { return drawChild(file, filepath.Join(dir, "out.svg")) }},
			{"flame html", func() *exec.Cmd { return drawChild(file, filepath.Join(dir, "out.html")) }},
		}
		wall := make([][]float64, len(cmds))
		rss := make([][]float64, len(cmds))
		cpu := make([][]float64, len(cmds))
		for range *limitRounds {
			for i, c := range cmds {
				w, r, u, err := measure(c.cmd())
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				wall[i], rss[i], cpu[i] = append(wall[i], w), append(rss[i], r), append(cpu[i], u)
			}
		}
		t.Logf("%d stacks (%.0f MB gzip), %d rounds; wall s, CPU s, peak RSS MB as min/median/max:", n, float64(fi.Size())/1e6, *limitRounds)
		for i, c := range cmds {
			line := fmt.Sprintf("  %-11s wall %s  cpu %s  rss %s", c.name, mmm(wall[i], "%.2f"), mmm(cpu[i], "%.2f"), mmm(rss[i], "%.0f"))
			if i > 0 {
				line += fmt.Sprintf("  ratio to pprof: wall %.2f, cpu %.2f, rss %.2f",
					median(wall[i])/median(wall[0]), median(cpu[i])/median(cpu[0]), median(rss[i])/median(rss[0]))
			}
			t.Log(line)
		}
		for i := 1; i < len(cmds); i++ {
			r := median(wall[i]) / median(wall[0])
			verdict := fmt.Sprintf("%s: %.2f× pprof -raw's wall time", cmds[i].name, r)
			ok := true
			switch {
			case n <= 100000:
				verdict += " (target ≤ 0.40×)"
				ok = r <= 0.40
			default:
				m := median(rss[i])
				verdict += fmt.Sprintf(", %.0f MB (targets ≤ 0.33×, 5 s of pprof's 15.2 s here, and ≤ 1200 MB)", m)
				ok = r <= 0.33 && m <= 1200
			}
			if verdict += okMissed(ok); ok {
				t.Log(verdict)
			} else {
				t.Error(verdict)
			}
		}
	}
}

func okMissed(ok bool) string {
	if ok {
		return ": ok"
	}
	return ": MISSED"
}

// writeGenerated writes the generated profile from a child process
// (TestGenerate): Linux counts a child's RSS before exec in its peak, and
// children are forked from this process, which must therefore stay small.
func writeGenerated(file string, n int) error {
	cmd := exec.Command(os.Args[0], "-test.run=^TestGenerate$", "-gen", file+".tmp", "-gen-stacks", strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("generating %s: %v\n%s", file, err, out)
	}
	return os.Rename(file+".tmp", file)
}

// drawChild runs TestDrawChild in a fresh process of this test binary.
func drawChild(in, out string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDrawChild$")
	cmd.Env = append(os.Environ(), "PERFLAB_DRAW="+in+"\n"+out)
	return cmd
}

// TestDrawChild is what `perflab flame IN -o OUT` does with a profile
// file: stream it into a Source, build the tree, write SVG or HTML.
func TestDrawChild(t *testing.T) {
	arg := os.Getenv("PERFLAB_DRAW")
	if arg == "" {
		t.Skip("a child of TestDrawLimit")
	}
	in, out, _ := strings.Cut(arg, "\n")
	if err := drawFile(in, out); err != nil {
		t.Fatal(err)
	}
}

func drawFile(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := ReadSource(f, profiles.Limits{})
	if err != nil {
		return err
	}
	tr, err := BuildSource(src, Options{DrawnOnly: true})
	if err != nil {
		return err
	}
	src = nil
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if strings.HasSuffix(out, ".html") {
		err = tr.WriteHTML(bw)
	} else {
		err = tr.WriteSVG(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// measure runs cmd with its output discarded and returns its wall time
// (s), peak RSS (MB) and user+system CPU (s).
func measure(cmd *exec.Cmd) (wall, rss, cpu float64, err error) {
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = nil, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall = time.Since(start).Seconds()
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rss = float64(ru.Maxrss) / 1024 // KiB on Linux
	cpu = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	return wall, rss, cpu, nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mmm(xs []float64, f string) string {
	return fmt.Sprintf(f+"/"+f+"/"+f, slices.Min(xs), median(xs), slices.Max(xs))
}
