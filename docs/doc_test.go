package docs_test

// The documents' examples are executed here, as golang.org/x/perf's
// benchstat runs the examples of its package comment, so that a renamed
// flag, a removed command or a changed output cannot leave the docs wrong
// (issue 25). The conventions, which the documents follow:
//
//   - Every line of a ```sh block is a command, run by sh in a directory
//     with a small run store. Lines of a ```console block that start with
//     "$ " are commands too. Blocks without a language are not run.
//   - A command must exit 0, unless its comment says "# exit status N" or
//     "# exit status N or M".
//   - A command whose comment says "# not run by the doc test: REASON" is
//     skipped (it needs a network, a server, a browser, or runs forever).
//   - OLD, NEW and RUN stand for run ids: two runs of uuid-hash made here,
//     NEW and RUN being the same.
//   - "<!-- doc test: file PATH -->" before a block writes the block to
//     PATH in that directory (a rules file, a scenario module's files).
//   - "<!-- doc test: golden PATH -->" before a block says the block is
//     lines of the repository's file PATH, in order, with lines "…"
//     between the runs of lines it leaves out.
//
// perflab run and bench are made short: the test's perflab appends --count
// 6 --time 5ms --warmup 0s --profile-time 100ms --until-max 1s to every
// run's flags, --count 6 --time 10ms --profile-time 100ms to bench's (the
// last value of a flag wins), so a run checks its flags, scenario,
// variants and parameters, but not its figures. Six rounds, the fewest
// with an interval: fewer, and a run whose --until-max passes first is
// not saved (json: unsupported value: +Inf, from the --until warning).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// docs are the documents whose commands are run, relative to this
// directory, in the order a reader meets them (they share one store).
var docs = []string{"../README.md", "manual.md"}

// command is one command of a document.
type command struct {
	doc  string
	line int
	text string
	// skip is the reason the document gives for not running it.
	skip string
	// status are the exit statuses the document allows.
	status []int
}

// block is one fenced block of a document.
type block struct {
	line int    // of the opening fence
	lang string // the fence's info string
	body []string
	// file and golden are the "<!-- doc test: … -->" directive before it.
	file, golden string
}

var directive = regexp.MustCompile(`^<!-- doc test: (file|golden) (\S+) -->$`)

// blocks returns the fenced blocks of a Markdown document.
func blocks(t *testing.T, doc string) []block {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	var file, golden string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body = append(cur.body, line)
		case strings.HasPrefix(line, "```"):
			cur = &block{line: n, lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), file: file, golden: golden}
			file, golden = "", ""
		default:
			if m := directive.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				if m[1] == "file" {
					file = m[2]
				} else {
					golden = m[2]
				}
			} else if strings.TrimSpace(line) != "" {
				// A directive belongs to the block right after it.
				file, golden = "", ""
			}
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unclosed code block", doc, cur.line)
	}
	return out
}

var (
	skipRE   = regexp.MustCompile(`#\s*not run by the doc test:\s*(.+)$`)
	statusRE = regexp.MustCompile(`#.*\bexit status (\d+)(?: or (\d+))?`)
)

// commands returns the commands of a document's sh and console blocks.
func commands(t *testing.T, doc string) []command {
	t.Helper()
	var out []command
	for _, b := range blocks(t, doc) {
		if b.lang != "sh" && b.lang != "console" {
			continue
		}
		for i := 0; i < len(b.body); i++ {
			line, n := b.body[i], b.line+1+i
			if b.lang == "console" {
				if !strings.HasPrefix(line, "$ ") {
					continue
				}
				line = strings.TrimPrefix(line, "$ ")
			}
			for strings.HasSuffix(line, `\`) && i+1 < len(b.body) {
				i++
				line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(b.body[i])
			}
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			c := command{doc: filepath.Base(doc), line: n, text: line, status: []int{0}}
			if m := skipRE.FindStringSubmatch(line); m != nil {
				c.skip = m[1]
			}
			if m := statusRE.FindStringSubmatch(line); m != nil {
				c.status = nil
				for _, s := range m[1:] {
					if s != "" {
						v, _ := strconv.Atoi(s)
						c.status = append(c.status, v)
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// lab is a directory with a small run store and the perflab the
// documents' commands run.
type lab struct {
	dir, bin string // the working directory; perflab's directory for PATH
	ids      map[string]string
}

// perflabWrapper is the test's perflab: the real one, with every run made
// short (see the file's comment).
const perflabWrapper = `#!/bin/sh
case "$1" in
run) exec "%[1]s" "$@" --count 6 --time 5ms --warmup 0s --profile-time 100ms --until-max 1s ;;
bench) exec "%[1]s" "$@" --count 6 --time 10ms --profile-time 100ms ;;
esac
exec "%[1]s" "$@"
`

// newLab builds perflab and a store of two small uuid-hash runs (OLD,
// NEW), and the profile files the flame examples name.
func newLab(t *testing.T) *lab {
	t.Helper()
	tmp := t.TempDir()
	real := filepath.Join(tmp, "real", "perflab")
	if out, err := exec.Command("go", "build", "-o", real, "../cmd/perflab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "perflab"), fmt.Appendf(nil, perflabWrapper, real), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &lab{dir: filepath.Join(tmp, "work"), bin: bin, ids: map[string]string{}}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Two runs with every profile, six rounds (enough for an interval),
	// and the mutex variant at four goroutines, whose mutex profile has
	// contention in it.
	for range 2 {
		l.run(t, 0, "perflab run uuid-hash --variant sum,pool,mutex --count 6 --profile wall,cpu,mutex,block")
	}
	runs, err := os.ReadDir(filepath.Join(l.dir, "perflab-runs"))
	if err != nil || len(runs) != 2 {
		t.Fatalf("fixture store: %v, %v", runs, err)
	}
	l.ids["OLD"], l.ids["NEW"], l.ids["RUN"] = runs[0].Name(), runs[1].Name(), runs[1].Name()
	caseDir := func(id string) string {
		return filepath.Join(l.dir, "perflab-runs", id, "cases", "variant=mutex,names=20000,threads=4")
	}
	for dst, src := range map[string]string{
		"cpu.pb.gz":    filepath.Join(caseDir(l.ids["NEW"]), "cpu.pb.gz"),
		"mutex.pb.gz":  filepath.Join(caseDir(l.ids["NEW"]), "mutex.pb.gz"),
		"before.pb.gz": filepath.Join(caseDir(l.ids["OLD"]), "wall.pb.gz"),
		"after.pb.gz":  filepath.Join(caseDir(l.ids["NEW"]), "wall.pb.gz"),
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(l.dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

var placeholder = regexp.MustCompile(`\b(OLD|NEW|RUN)\b`)

// run runs one command line with sh in the lab and checks its exit status.
func (l *lab) run(t *testing.T, want int, line string, more ...int) {
	t.Helper()
	line = placeholder.ReplaceAllStringFunc(line, func(p string) string { return l.ids[p] })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = l.dir
	cmd.Env = []string{"PATH=" + l.bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	got := cmd.ProcessState.ExitCode()
	if err != nil && got < 0 {
		t.Fatalf("%s: %v\n%s", line, err, out.String())
	}
	if got != want && !slices.Contains(more, got) {
		t.Errorf("%s: exit status %d, want %v\n%s", line, got, append([]int{want}, more...), out.String())
	}
}

// writeFiles writes the blocks a document marks as files into dir.
func writeFiles(t *testing.T, doc, dir string) {
	t.Helper()
	for _, b := range blocks(t, doc) {
		if b.file == "" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(b.file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(b.body, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCommands runs every command of the documents, in order, in one lab.
func TestCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perflab and runs every documented command")
	}
	l := newLab(t)
	for _, doc := range docs {
		writeFiles(t, doc, l.dir)
		cmds := commands(t, doc)
		if len(cmds) == 0 {
			t.Errorf("%s: no commands found: the doc test's conventions changed?", doc)
		}
		for _, c := range cmds {
			t.Run(fmt.Sprintf("%s:%d", c.doc, c.line), func(t *testing.T) {
				if c.skip != "" {
					t.Skip(c.skip)
				}
				l.run(t, c.status[0], c.text, c.status[1:]...)
			})
		}
	}
}

// TestCommandsParse holds the parser to the conventions on a small
// document, so a broken parser cannot pass TestCommands by finding
// nothing to run.
func TestCommandsParse(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	src := "text\n" +
		"```sh\n" +
		"perflab list\n" +
		"# a comment\n" +
		"perflab compare OLD NEW \\\n" +
		"    --fail-on regression   # exit status 0 or 1\n" +
		"perflab serve   # not run by the doc test: runs until Ctrl-C\n" +
		"```\n" +
		"```\n" +
		"git clone x\n" +
		"```\n" +
		"```console\n" +
		"$ perflab show --list\n" +
		"ID  SCENARIO\n" +
		"```\n"
	if err := os.WriteFile(doc, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := commands(t, doc)
	want := []command{
		{doc: "doc.md", line: 3, text: "perflab list", status: []int{0}},
		{doc: "doc.md", line: 5, text: "perflab compare OLD NEW  --fail-on regression   # exit status 0 or 1", status: []int{0, 1}},
		{doc: "doc.md", line: 7, text: "perflab serve   # not run by the doc test: runs until Ctrl-C", skip: "runs until Ctrl-C", status: []int{0}},
		{doc: "doc.md", line: 13, text: "perflab show --list", status: []int{0}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("commands:\n got %v\nwant %v", got, want)
	}
}

// TestGoldenBlocks: a block marked as lines of a golden file is those
// lines, so the README's sample output is the renderer's, not a copy made
// by hand that the renderer has since left behind.
func TestGoldenBlocks(t *testing.T) {
	found := 0
	for _, doc := range docs {
		for _, b := range blocks(t, doc) {
			if b.golden == "" {
				continue
			}
			found++
			data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(b.golden)))
			if err != nil {
				t.Fatalf("%s:%d: %v", doc, b.line, err)
			}
			if err := excerptOf(b.body, strings.Split(string(data), "\n")); err != nil {
				t.Errorf("%s:%d: the block is not an excerpt of %s: %v (update the block from the golden)", doc, b.line, b.golden, err)
			}
		}
	}
	if found == 0 {
		t.Error("README.md's sample output is no longer checked against a golden file")
	}
}

// excerptOf says whether excerpt is runs of consecutive lines of file, in
// order, separated by lines "…".
func excerptOf(excerpt, file []string) error {
	var runs [][]string
	cur := []string{}
	for _, l := range excerpt {
		if strings.TrimSpace(l) == "…" {
			runs, cur = append(runs, cur), []string{}
			continue
		}
		cur = append(cur, l)
	}
	runs = append(runs, cur)
	at := 0
	for _, r := range runs {
		if len(r) == 0 {
			return fmt.Errorf("an empty run of lines around a …")
		}
		i := indexRun(file[at:], r)
		if i < 0 {
			return fmt.Errorf("lines %q… are not in the file (after line %d)", r[0], at)
		}
		at += i + len(r)
	}
	return nil
}

func indexRun(file, run []string) int {
	for i := 0; i+len(run) <= len(file); i++ {
		if slices.Equal(file[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

func TestExcerptOf(t *testing.T) {
	file := []string{"a", "b", "c", "d", "e"}
	for _, tt := range []struct {
		name    string
		excerpt []string
		ok      bool
	}{
		{"whole", file, true},
		{"two runs", []string{"a", "b", "…", "d"}, true},
		{"changed line", []string{"a", "x"}, false},
		{"out of order", []string{"d", "…", "a"}, false},
		{"a gap without …", []string{"a", "c"}, false},
		{"empty run", []string{"a", "…", "…", "c"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := excerptOf(tt.excerpt, file); (err == nil) != tt.ok {
				t.Errorf("excerptOf(%q) = %v, want ok=%v", tt.excerpt, err, tt.ok)
			}
		})
	}
}

// measured matches a figure that only a measurement gives: a time or
// size per operation, a ratio, a decimal percentage, a rate, a p-value.
var measured = regexp.MustCompile(`\d(?:[\d,.]*\d)?\s?(?:ns|µs|us|ms)(?:/op)?\b|\d+\.\d+\s?%|\d(?:[\d.]*\d)?×|\d(?:[\d,.]*\d)?\s?(?:B/op|allocs/op|MB/s|ops/s|requests/s|MB|GB|KB)\b|\bp=0\.\d+`)

// TestNoHandCopiedFigures: the README and the manual hold no measured
// figure outside a block checked against a golden. Measurements belong in
// docs/history.md and docs/methods.md, each with the command that makes
// it; an example of a format (in `code`) is not a measurement.
func TestNoHandCopiedFigures(t *testing.T) {
	code := regexp.MustCompile("`[^`]*`")
	// A confidence level is chosen, not measured.
	level := regexp.MustCompile(`\d+(\.\d+)?% (confidence )?interval`)
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		golden := map[int]bool{} // lines of golden-checked blocks
		for _, b := range blocks(t, doc) {
			if b.golden != "" {
				for i := range len(b.body) + 2 {
					golden[b.line+i] = true
				}
			}
		}
		inCode := false
		for n, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
			}
			if golden[n+1] {
				continue
			}
			if inCode {
				// A command's flags are not figures; its comment may be.
				_, comment, ok := strings.Cut(line, " #")
				if !ok {
					continue
				}
				line = comment
			}
			if m := measured.FindString(level.ReplaceAllString(code.ReplaceAllString(line, ""), "")); m != "" {
				t.Errorf("%s:%d: %q looks like a measured figure: generate it, or move it to docs/history.md with its command", doc, n+1, m)
			}
		}
	}
}

func TestMeasuredPattern(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"it ran at 259.8ns", true},
		{"4.5× faster", true},
		{"a share of 64.7% of", true},
		{"1,480 requests/s", true},
		{"peaks at 172 MB", true},
		{"p=0.026", true},
		{"70.1 B/op", true},
		{"the default threshold is 5%", false},
		{"about 2 minutes", false},
		{"Go 1.26.8 or later", false},
		{"fit 80 columns", false},
	} {
		if got := measured.MatchString(tt.s); got != tt.want {
			t.Errorf("measured.MatchString(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestScenarioExample builds the manual's scenario as a reader would: a
// module of its own with a replace directive to this repository, then
// runs its main and its go test benchmark.
func TestScenarioExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and runs a scenario")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, "manual.md", dir)
	mod := filepath.Join(dir, "mylab")
	if _, err := os.Stat(filepath.Join(mod, "mycache", "mycache.go")); err != nil {
		t.Fatalf("the manual's scenario was not found: %v", err)
	}
	// The go.sum of this repository holds every module the scenario's
	// module needs, so tidying it needs no checksum database.
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	// The manual's Go is what gofmt writes, as a reader's editor would.
	if out, err := exec.Command("gofmt", "-l", mod).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("gofmt -l: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"mod", "init", "example.com/mylab"},
		{"mod", "edit", "-replace", "github.com/perflab/perflab=" + repo},
		{"mod", "tidy"},
		{"vet", "./..."},
		{"run", "./cmd/mylab", "run", "my-cache", "--count", "2", "--time", "5ms", "--warmup", "0s", "--profile", "none", "-o", "runs"},
		{"test", "-run", "^$", "-bench", ".", "-benchtime", "1x", "./mycache"},
		// The manual's perflab bench, on the module's own benchmark.
		{"run", "./cmd/mylab", "bench", "./mycache", "-bench", ".", "--count", "2", "--time", "5ms", "--profile", "none", "-o", "runs"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestLinks: every relative link of the documents names a file that
// exists and, with a #fragment, a heading of it (GitHub's anchors), so
// moving a section cannot leave a link pointing nowhere.
func TestLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append(files, "../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), filepath.FromSlash(path))
			}
			text, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", doc, target, err)
				continue
			}
			if frag != "" && !slices.Contains(anchors(string(text)), frag) {
				t.Errorf("%s: link %s: %s has no heading with that anchor", doc, target, file)
			}
		}
	}
}

// anchors returns the anchors GitHub makes of a Markdown document's
// headings: lower case, punctuation dropped, spaces to dashes.
func anchors(doc string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestNamedTestsExist: every test, fuzz target and benchmark a document
// names in `code` is a function of the repository. security.md gives the
// test that holds each limit, methods.md and history.md the benchmark
// behind each figure; a renamed or deleted test would leave a limit
// claimed by nothing.
func TestNamedTestsExist(t *testing.T) {
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)`")
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			funcs[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, doc := range append(files, "../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				found++
				if !funcs[m[1]] {
					t.Errorf("%s:%d: %s is no function of the repository: renamed or removed?", doc, n+1, m[1])
				}
			}
		}
	}
	if found == 0 {
		t.Error("no document names a test: the pattern no longer matches how they are written?")
	}
}

// TestDevCommands: the developer commands of methods.md and history.md
// take minutes (the ground-truth suite, make bench's benchmarks) and are
// not run here, but each must still select something: a go test command's
// -run (or, with -run '^$', -bench) pattern lists at least one function of
// its package (go test -list), and a script it runs exists.
func TestDevCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries to list their tests")
	}
	quoted := regexp.MustCompile(`'([^']*)'|(\S+)`)
	n := 0
	for _, doc := range []string{"methods.md", "history.md"} {
		for _, b := range blocks(t, doc) {
			if b.lang != "sh" {
				continue
			}
			for i, line := range b.body {
				line, _, _ = strings.Cut(line, " #")
				var args []string
				for _, m := range quoted.FindAllStringSubmatch(strings.TrimSpace(line), -1) {
					args = append(args, m[1]+m[2])
				}
				for len(args) > 0 && strings.Contains(args[0], "=") {
					args = args[1:] // an environment variable
				}
				where := fmt.Sprintf("%s:%d", doc, b.line+1+i)
				switch {
				case len(args) == 2 && args[0] == "sh":
					n++
					if _, err := os.Stat(filepath.Join("..", args[1])); err != nil {
						t.Errorf("%s: %v", where, err)
					}
				case len(args) > 2 && args[0] == "go" && args[1] == "test":
					n++
					var run, bench, pkg string
					for k := 2; k < len(args); k++ {
						switch a := args[k]; {
						case a == "-run" && k+1 < len(args):
							run, k = args[k+1], k+1
						case a == "-bench" && k+1 < len(args):
							bench, k = args[k+1], k+1
						case strings.HasPrefix(a, "./") && pkg == "":
							pkg = a
						}
					}
					pattern := run
					if run == "^$" {
						pattern = bench
					}
					if pattern == "" || pkg == "" {
						t.Errorf("%s: %q: no -run or -bench pattern, or no package", where, line)
						continue
					}
					cmd := exec.Command("go", "test", "-list", pattern, pkg)
					cmd.Dir = ".."
					out, err := cmd.CombinedOutput()
					listed := 0
					for _, l := range strings.Split(string(out), "\n") {
						if strings.HasPrefix(l, "Test") || strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "Fuzz") {
							listed++
						}
					}
					if err != nil || listed == 0 {
						t.Errorf("%s: %q selects nothing in %s (go test -list %s: %v)\n%s", where, line, pkg, pattern, err, out)
					}
				default:
					t.Errorf("%s: %q: neither go test nor sh SCRIPT: teach this test to check it", where, line)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no developer commands found in methods.md and history.md")
	}
}
