package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHelpFits: every command's help is at most helpWidth columns wide, as
// the rest of perflab's output is, and says all of its text, in order.
func TestHelpFits(t *testing.T) {
	root := NewRoot(&IO{Out: new(bytes.Buffer), Err: new(bytes.Buffer)})
	cmds := append(root.Commands(), root)
	for _, c := range cmds {
		if c.Name() == "completion" || c.Name() == "help" {
			continue // cobra's own
		}
		t.Run(c.Name(), func(t *testing.T) {
			out, errs, code := execute(t, strings.Fields(strings.TrimPrefix(c.CommandPath(), "perflab")+" --help")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth {
					t.Errorf("line %d is %d columns: %q", i+1, n, line)
				}
			}
			// The words of the command's text and its examples, in order.
			got := strings.Fields(strings.ReplaceAll(out, ` \`, ""))
			for _, text := range []string{c.Long, c.Example} {
				want := strings.Fields(text)
				j := 0
				for _, w := range got {
					if j < len(want) && w == want[j] {
						j++
					}
				}
				if j < len(want) {
					t.Errorf("help lost %q (word %d of %d) of:\n%s", want[j], j+1, len(want), text)
				}
			}
		})
	}
}

func TestReflow(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"joined and wrapped", "a b\nc", "a b c"},
		{"paragraphs kept", "a\n\nb", "a\n\nb"},
		{"indented lines as they are", "a\n  x    y\nb", "a\n  x    y\nb"},
		{"long line", strings.Repeat("word ", 20), strings.TrimSpace(strings.Repeat("word ", 16)) + "\n" + strings.TrimSpace(strings.Repeat("word ", 4))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := reflow(tt.in); got != tt.want {
				t.Errorf("reflow(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	// An example too wide is broken at a space, continued with " \".
	ex := "  perflab flame --from-pyroscope http://127.0.0.1:4040 --query '{service_name=\"perflab\"}' --profile-type wall -o prod.html"
	got := wrapExample(ex)
	for _, line := range strings.Split(got, "\n") {
		if utf8.RuneCountInString(line) > helpWidth {
			t.Errorf("example line %q is wider than %d", line, helpWidth)
		}
	}
	if strings.Join(strings.Fields(strings.ReplaceAll(got, ` \`, "")), " ") != strings.Join(strings.Fields(ex), " ") {
		t.Errorf("wrapExample changed the command:\n%s", got)
	}
}

// TestGroupHelp: the --help of a command with subcommands, and the help
// command (argsCheckedHelp), are still cobra's when no argument is mistyped: help, exit 0, and the
// flag listed as cobra lists its own.
func TestGroupHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "help for perflab"},
		{[]string{"-h"}, "help for perflab"},
		{[]string{"runs", "--help"}, "help for runs"},
		{[]string{"runs", "rm", "--help"}, "help for rm"},
		// The help command, which checks its topic as --help does.
		{[]string{"help"}, "help for perflab"},
		{[]string{"help", "runs"}, "help for runs"},
		{[]string{"help", "runs", "rm"}, "help for rm"},
		{[]string{"help", "show", "latest"}, "help for show"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errs, code := execute(t, tt.args...)
			if code != 0 || !strings.Contains(out, "Usage:") || !strings.Contains(out, "-h, --help") || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and help with %q", code, out, errs, tt.want)
			}
		})
	}
}
