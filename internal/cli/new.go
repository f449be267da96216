package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/buildinfo"
	"github.com/perflab/perflab/internal/scaffold"
	"github.com/spf13/cobra"
)

// NewOptions are the flags of `perflab new`.
type NewOptions struct {
	Name, Dir, Module string
	// PerflabDir is perflab's source, for the replace directive while
	// the module is not published; found from the binary when empty.
	PerflabDir string
	// NoTidy leaves out `go mod tidy` (tests of the files alone).
	NoTidy bool
}

func newNewCmd(io *IO, runF runFunc[NewOptions]) *cobra.Command {
	o := &NewOptions{}
	cmd := &cobra.Command{
		Use:   "new <name>",
		Short: "Create a module with a scenario of your own, ready to run",
		Long: `Create a Go module with a scenario of your own in directory <name> (or --dir):
a scenario package with two variants, its test and a go test benchmark, and a
main that is perflab with the scenario built in. It builds and runs at once:

  cd <name>
  go run . run <name>

Then change the question, the variants and the parameter to yours. While
github.com/perflab/perflab is not published, go.mod replaces it with the
source this perflab was built from (or --perflab-dir).`,
		Example: `  perflab new my-cache
  perflab new my-cache --dir ~/src/my-cache --module github.com/you/my-cache`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) != 1 {
				return usagef(errors.New("name the scenario to create, such as " + io.cmd("new my-cache")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			o.Name = a[0]
			return runF.or(newRun)(cmd.Context(), io, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", "", "directory to create (default ./<name>)")
	f.StringVar(&o.Module, "module", "", "module path (default example.com/<name>)")
	f.StringVar(&o.PerflabDir, "perflab-dir", "", "perflab's source directory for go.mod's replace (default the one this binary was built from)")
	f.BoolVar(&o.NoTidy, "no-tidy", false, "do not run go mod tidy (the module then needs it before it builds)")
	return cmd
}

func newRun(_ context.Context, io *IO, o *NewOptions) error {
	if err := scaffold.CheckName(o.Name); err != nil {
		return usagef(err)
	}
	dir, module := o.Dir, o.Module
	if dir == "" {
		dir = o.Name
	}
	if module == "" {
		module = "example.com/" + o.Name
	}
	if err := scaffold.CheckModule(module); err != nil {
		return usagef(fmt.Errorf("--module: %w", err))
	}
	info := buildinfo.Read()
	sw := scaffold.Options{Name: o.Name, Dir: dir, Module: module, Require: info.Require(), Go: goDirective()}
	switch {
	case o.PerflabDir != "":
		abs, err := filepath.Abs(o.PerflabDir)
		if err != nil {
			return err
		}
		if !buildinfo.IsSource(abs) {
			return usagef(fmt.Errorf("--perflab-dir %s: no go.mod of %s there: give the directory of a perflab checkout", o.PerflabDir, buildinfo.Module))
		}
		sw.Replace = abs
	case !info.Published():
		if sw.Replace = info.SourceDir(); sw.Replace == "" {
			return usagef(fmt.Errorf("%s is not published yet, and this binary does not know where its source is (built with -trimpath, or moved): give --perflab-dir, the directory of a perflab checkout", buildinfo.Module))
		}
	}
	if sw.Replace != "" && (o.PerflabDir != "" || sw.Require == buildinfo.ZeroVersion) {
		// The version of the source's commit: with it the require
		// still holds once the replace is deleted and the commit public.
		if v := scaffold.PseudoVersion(sw.Replace); v != "" {
			sw.Require = v
		}
	}
	files, err := scaffold.Write(sw)
	if err != nil {
		return err
	}
	from := "perflab " + sw.Require
	if sw.Replace != "" {
		from = "perflab from " + sw.Replace
	}
	fmt.Fprintf(io.Out, "created %s (module %s, %s):\n", dir, module, from)
	for _, l := range fileRows(files, 80) {
		fmt.Fprintln(io.Out, l)
	}
	if !o.NoTidy {
		if err := scaffold.Tidy(dir, ""); err != nil {
			return fmt.Errorf("%w\nthe files are in place: once the error is fixed, run go mod tidy in %s", err, dir)
		}
	}
	fmt.Fprintf(io.Out, "\nrun it:\n  cd %s\n  go run . run %s\n\nthen go test ./... checks that the variants agree; README.md there says\nwhat to change.\n",
		shellQuote(dir), o.Name)
	return nil
}

// goDirective is the go line of a new go.mod: the toolchain that built
// this binary, which builds perflab ("1.26.8").
func goDirective() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	v, _, _ = strings.Cut(v, " ") // "1.27rc1 X:exp" and the like
	if v == "" || v[0] < '0' || v[0] > '9' {
		return "1.26"
	}
	return v
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/~+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fileRows lists files two spaces apart in rows indented by two, each at
// most width columns unless one name is longer: the seven files of a new
// scenario made one row of 85 columns.
func fileRows(files []string, width int) []string {
	var rows []string
	row := ""
	for _, f := range files {
		if row != "" && utf8.RuneCountInString(row)+2+utf8.RuneCountInString(f) > width {
			rows = append(rows, row)
			row = ""
		}
		if row == "" {
			row = "  " + f
		} else {
			row += "  " + f
		}
	}
	if row != "" {
		rows = append(rows, row)
	}
	return rows
}
