package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// TestCommandName: the command the hints name, from os.Args[0] alone.
func TestCommandName(t *testing.T) {
	for _, tt := range []struct {
		name, arg0, want string
	}{
		{"on PATH", "perflab", "perflab"},
		{"by its path", "/home/u/go/bin/perflab", "perflab"},
		{"relative", "./perflab", "perflab"},
		{"Windows", "perflab.exe", "perflab"},
		{"go run of a module from perflab new", "/tmp/go-build2771433911/b001/exe/my-cache", "go run ."},
		{"go run under GOTMPDIR", "/home/u/.cache/tmp/go-build123/b001/exe/perflab-main", "go run ."},
		{"go run, built before (Go 1.24+: from the build cache)", "/root/.cache/go-build/a8/a8aedbe73a9e41e48ccc0af21512aa2bc2bbc4d1797182f11dd48584b13b6182-d/my-cache", "go run ."},
		{"a cache-like directory of another first byte", "/c/ff/a8aedbe73a9e41e48ccc0af21512aa2bc2bbc4d1797182f11dd48584b13b6182-d/my-cache", "my-cache"},
		{"a short id is no cache entry", "/c/a8/a8aedbe7-d/my-cache", "my-cache"},
		// go run ./cmd/perflab: the binary is named perflab, which is
		// what a user who has one on PATH types.
		{"go run of perflab itself", "/tmp/go-build99/b001/exe/perflab", "perflab"},
		{"go test's binary is no go run", "/tmp/go-build2771433911/b001/cli.test", "cli.test"},
		{"an exe directory elsewhere", "/opt/exe/my-cache", "my-cache"},
		{"a user's own binary", "/usr/local/bin/my-cache", "my-cache"},
		{"a user's own binary, here", "./my-cache", "my-cache"},
		{"empty", "", "perflab"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandName(tt.arg0); got != tt.want {
				t.Errorf("commandName(%q) = %q, want %q", tt.arg0, got, tt.want)
			}
		})
	}
}

// executeAs is execute for a user who runs perflab as cmd, its error
// printed as Main prints it, with the store's hint.
func executeAs(t *testing.T, cmd string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := &IO{Out: &out, Err: &errb, Cmd: cmd}
	root := NewRoot(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		printError(&errb, streams, err)
	}
	return out.String(), errb.String(), exitCode(err)
}

// TestHintsNameTheCommand: inside a module made by perflab new, perflab
// is `go run .`, and every hint that names a command says that, not
// perflab (which there is not on the user's PATH).
func TestHintsNameTheCommand(t *testing.T) {
	dir, ids := pruneStore(t)
	empty := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs")
	pushed := quickRun(t, "cpu")
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	// A run of one variant, which --base cannot compare.
	lonely := filepath.Join(t.TempDir(), "runs")
	lonelyID := storeRun(t, store.Open(lonely), time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), map[string][]float64{"variant=other/keys=1/threads=1": {100, 101, 99, 100, 102, 98}})
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"saved run", []string{"run", "cipher-cache", "--variant", "mutex", "-p", "keys=128", "--threads", "1",
			"--count", "2", "--time", "2ms", "--warmup", "1ms", "--profile", "none", "-o", runs},
			[]string{"\n  go run . show "}},
		{"runs newer than latest", []string{"show", "-o", dir},
			[]string{"(`go run . recover ID` saves one); go run . runs prune --empty removes"}},
		{"a partial run in the listing", []string{"show", "--list", "-o", dir},
			[]string{"recover it: `go run . recover " + ids["stale"] + "`"}},
		{"no runs", []string{"show", "-o", empty}, []string{"(run `go run . run <scenario>` first)"}},
		{"no such run", []string{"show", "20200101-000000-nothing", "-o", dir}, []string{"(see `go run . show --list`)"}},
		{"run without a scenario", []string{"run"}, []string{"(see go run . list)"}},
		// The registry's own error says perflab list: lab's names the
		// command the user ran.
		{"an unknown scenario", []string{"run", "no-such-scenario"}, []string{"(run `go run . list`; a scenario of your own"}},
		{"a scenario's typo", []string{"run", "cipher-cach"}, []string{"did you mean cipher-cache? (run `go run . list`)"}},
		{"list of an unknown scenario", []string{"list", "no-such-scenario"}, []string{"(run `go run . list`;"}},
		{"soak of an unknown scenario", []string{"soak", "no-such-scenario", "--url", "http://127.0.0.1:1"}, []string{"(run `go run . list`;"}},
		{"a variant for a scenario", []string{"run", "nocache-pool"}, []string{"(go run . run cipher-cache --variant nocache-pool)"}},
		{"an empty --variant", []string{"run", "cipher-cache", "--variant", ""}, []string{"(see go run . list)"}},
		{"a parameter none has", []string{"run", "cipher-cache", "test-broken", "-p", "nosuch=1"}, []string{"(see go run . list)"}},
		{"flame of a whole run", []string{"flame", filepath.Join(dir, ids["good"])}, []string{"(see `go run . show " + ids["good"] + "`)"}},
		{"runs rm without ids", []string{"runs", "rm"}, []string{"(go run . show --list lists them)"}},
		{"runs rm latest", []string{"runs", "rm", "latest", "-o", dir}, []string{"(go run . show --list)"}},
		{"prune of nothing", []string{"runs", "prune", "-o", dir}, []string{"(see go run . runs prune --help)"}},
		{"list -l", []string{"list", "-l"}, []string{"go run . flame on a case"}},
		{"compare of a run of one variant", []string{"compare", lonelyID, "--base", "other", "-o", lonely}, []string{"compare the run with another (go run . compare OLD NEW)"}},
		{"a push that failed", []string{"push", "-o", pushed, "--url", down.URL}, []string{" -o " + pushed + " --url ...` sends it again)"}},
		{"unknown command", []string{"runz"}, []string{`unknown command "runz" for "go run ."`, "(see go run . --help)"}},
		{"unknown subcommand", []string{"runs", "rn"}, []string{`for "go run . runs"`, "(see go run . runs --help)"}},
		{"unknown flag", []string{"show", "--zzzz"}, []string{"(see go run . show --help)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, _ := executeAs(t, "go run .", tt.args...)
			for _, w := range tt.want {
				if !containsWords(out+errs, w) {
					t.Errorf("%v: no %q in\n%s%s", tt.args, w, out, errs)
				}
			}
			// perflab as the name of a command to type: in backquotes,
			// or before a verb.
			for _, verb := range []string{"`perflab", "perflab show", "perflab run ", "perflab recover", "perflab runs", "perflab list", "perflab flame"} {
				if strings.Contains(out+errs, verb) {
					t.Errorf("%v: says %q:\n%s%s", tt.args, verb, out, errs)
				}
			}
		})
	}
}

// TestHelpNamesTheCommand: help's usage line and examples name the
// command as the user runs it, as the hints do.
func TestHelpNamesTheCommand(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"root", []string{"--help"}, []string{"Usage:\n  go run . [flags]\n  go run . [command]", `Use "go run . [command] --help"`}},
		{"run", []string{"run", "--help"}, []string{"Usage:\n  go run . run <scenario>", "Examples:\n  go run . run cipher-cache\n"}},
		{"runs", []string{"runs", "--help"}, []string{"  go run . runs [command]", "  go run . runs prune --empty", `Use "go run . runs [command] --help"`}},
		{"runs prune", []string{"runs", "prune", "--help"}, []string{"Usage:\n  go run . runs prune [--incomplete]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := executeAs(t, "go run .", tt.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
			namesPerflab(t, out)
		})
	}
}

// namesPerflab fails t for a line of help, up to its flags, that names
// perflab as a command to type: an indented line that begins with it (a
// usage line, an example, a command in the text). A flag's text (see
// perflab push) is left as it is, and so is prose that begins with
// perflab, at the start of a line.
func namesPerflab(t *testing.T, help string) {
	t.Helper()
	usage, _, _ := strings.Cut(help, "\nFlags:")
	for _, l := range strings.Split(usage, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "perflab ") && !strings.HasPrefix(l, "perflab ") {
			t.Errorf("a line of help names perflab: %q", l)
		}
	}
}

// TestEveryHelpNamesTheCommand: no command's help names perflab as a
// command to type where the user runs it as go run . (compare's text
// listed its three forms as perflab compare), and all of it still fits
// in helpWidth columns.
func TestEveryHelpNamesTheCommand(t *testing.T) {
	var visit func(c *cobra.Command, path []string)
	visit = func(c *cobra.Command, path []string) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		t.Run(strings.Join(append([]string{"perflab"}, path...), " "), func(t *testing.T) {
			out, errs, code := executeAs(t, "go run .", append(slices.Clone(path), "--help")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			namesPerflab(t, out)
			// go run . is a column longer than perflab: the help
			// still fits.
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
		})
		for _, s := range c.Commands() {
			visit(s, append(slices.Clone(path), s.Name()))
		}
	}
	visit(NewRoot(&IO{Out: io.Discard, Err: io.Discard}), nil)
}
