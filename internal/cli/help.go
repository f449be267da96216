package cli

import (
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is the width help is written to, as every other output of
// perflab's is: a command's text, its usage line, examples, commands and
// flags are wrapped to it (the flags by pflag's own FlagUsagesWrapped).
const helpWidth = 80

// The templates are cobra's defaults (v1.10) with each free-running text
// passed through a wrapping function.
const (
	helpTemplate = `{{with (or .Long .Short)}}{{typedText $ . | reflow | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}`

	usageTemplate = `Usage:{{if .Runnable}}
{{hang (typedUseLine .) 2 6}}{{end}}{{if .HasAvailableSubCommands}}
  {{typedPath .}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{wrapExample (typedExample .)}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
{{commandLine .Name .NamePadding .Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{wrapFlags .LocalFlags | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{wrapFlags .InheritedFlags | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{typedPath .}} [command] --help" for more information about a command.{{end}}
`
)

func init() {
	cobra.AddTemplateFunc("reflow", reflow)
	cobra.AddTemplateFunc("hang", func(s string, first, rest int) string {
		return hang(strings.Repeat(" ", first)+s, rest)
	})
	cobra.AddTemplateFunc("wrapExample", wrapExample)
	// The usage line and examples name the command as the user runs it
	// (commandPath): "go run . run <scenario>" in a module from perflab
	// new, where there is no perflab to type.
	cobra.AddTemplateFunc("typedPath", commandPath)
	cobra.AddTemplateFunc("typedUseLine", func(c *cobra.Command) string {
		return commandPath(c) + strings.TrimPrefix(c.UseLine(), c.CommandPath())
	})
	cobra.AddTemplateFunc("typedExample", func(c *cobra.Command) string { return typedLines(c, c.Example, false) })
	cobra.AddTemplateFunc("typedText", func(c *cobra.Command, text string) string { return typedLines(c, text, true) })
	cobra.AddTemplateFunc("commandLine", func(name string, pad int, short string) string {
		head := "  " + name + strings.Repeat(" ", max(0, pad-len(name))) + " "
		return hangAfter(head, short, utf8.RuneCountInString(head))
	})
	cobra.AddTemplateFunc("wrapFlags", func(f *pflag.FlagSet) string { return f.FlagUsagesWrapped(helpWidth) })
}

// useHelpLayout gives root, and so every command under it, the templates.
func useHelpLayout(root *cobra.Command) {
	root.SetHelpTemplate(helpTemplate)
	root.SetUsageTemplate(usageTemplate)
}

// listDefaults writes the defaults of list flags under root as the flags
// take them, "wall,cpu,mutex,block", not as pflag prints a Go slice,
// "[wall,cpu,mutex,block]". Call it once every command is added.
func listDefaults(root *cobra.Command) {
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if d := f.DefValue; strings.HasSuffix(f.Value.Type(), "Slice") && len(d) > 2 && d[0] == '[' && d[len(d)-1] == ']' {
				f.DefValue = d[1 : len(d)-1]
			}
		})
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

// reflow rewraps a command's text to helpWidth: its paragraphs (runs of
// lines between blank ones) are joined and wrapped again; an indented line
// is kept as it is (a command or a table).
func reflow(s string) string {
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, hang(strings.Join(para, " "), 0))
			para = nil
		}
	}
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
			out = append(out, "")
		case line[0] == ' ' || line[0] == '\t':
			flush()
			out = append(out, line)
		default:
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// hang wraps s at spaces to helpWidth, continuation lines indented by
// indent columns; s's own leading spaces are kept, and a word longer than
// the width stays whole.
func hang(s string, indent int) string {
	trimmed := strings.TrimLeft(s, " ")
	return hangAfter(s[:len(s)-len(trimmed)], trimmed, indent)
}

// hangAfter is hang of text after head, which is written as it is.
func hangAfter(head, text string, indent int) string {
	var b strings.Builder
	b.WriteString(head)
	col := utf8.RuneCountInString(head)
	for i, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case col+1+n > helpWidth:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// typedLines is text of c's help with the perflab that begins a line
// replaced by the command the user runs perflab by (commandPath): every
// line of an example, and in a command's text only the indented ones
// (indented only), which reflow keeps as commands to type (compare's
// three forms); a paragraph's line that begins with perflab is prose
// ("perflab runs a scenario's implementation variants").
func typedLines(c *cobra.Command, text string, indentedOnly bool) string {
	name := commandPath(c.Root())
	if name == c.Root().Name() {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		body := strings.TrimLeft(l, " \t")
		if indentedOnly && len(body) == len(l) {
			continue
		}
		if rest, ok := strings.CutPrefix(body, c.Root().Name()+" "); ok {
			lines[i] = l[:len(l)-len(body)] + name + " " + rest
		}
	}
	return strings.Join(lines, "\n")
}

// wrapExample breaks an example's lines that are wider than helpWidth at
// spaces, ending each broken line with a shell continuation (" \").
func wrapExample(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for utf8.RuneCountInString(line) > helpWidth {
			cut := -1
			for i, r := range line {
				if r == ' ' && i > 0 && utf8.RuneCountInString(line[:i]) <= helpWidth-2 && strings.TrimSpace(line[:i]) != "" {
					cut = i
				}
			}
			if cut <= strings.Index(line, strings.TrimSpace(line)) {
				break // no space to break at
			}
			out = append(out, line[:cut]+` \`)
			line = "      " + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
