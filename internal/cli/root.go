// Package cli implements the perflab command line: one file per verb, each
// with an options struct, a constructor that only parses flags, and a run
// function that takes writers and returns an error.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/buildinfo"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// IO carries the streams a command writes to: data to Out, progress and
// status to Err.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// ErrIsTerminal says whether Err is a terminal (progress bars) or a
	// pipe or file (plain lines).
	ErrIsTerminal bool
	// OutIsTerminal says whether Out is a terminal: commands that write
	// SVG or HTML refuse to fill one with markup.
	OutIsTerminal bool
	// InIsTerminal says whether In is a terminal, where a person can
	// answer a question (runs rm asks before it removes).
	InIsTerminal bool
	// Args are the command-line arguments, recorded with each run.
	Args []string
	// Cmd is how the user runs perflab ("perflab", "go run .", the name
	// of their own binary; see commandName), for the hints that name a
	// command; "" is "perflab".
	Cmd string
}

// ExitError carries a specific exit code.
type ExitError struct {
	Code int
	Err  error
}

// Error returns the wrapped error's message.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ExitError) Unwrap() error { return e.Err }

// NewRoot builds the perflab command tree.
func NewRoot(io *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "perflab",
		Short: "Benchmark implementation variants, profile them and see where the time goes",
		Long: `perflab runs a scenario's implementation variants across a parameter matrix and
goroutine counts, with confidence intervals and allocation figures, profiles every
case (wall-clock, CPU, mutex, block) and splits its time into work, lock, wait, alloc,
gc, sched and other. Runs are stored with their pprof profiles.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noSuchCommand,
		// Runnable, so that cobra checks the root's arguments (an unknown
		// command) instead of printing help for anything.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// --version prints what `perflab version` does.
	var v strings.Builder
	writeVersion(&v, buildinfo.Read())
	root.Version = v.String()
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	useHelpLayout(root)
	root.SetFlagErrorFunc(flagErrors)
	if io.Cmd != "" {
		root.Annotations = map[string]string{cmdAnnotation: io.Cmd}
	}
	root.AddCommand(
		newBenchCmd(io, nil),
		newListCmd(io, nil),
		newPushCmd(io, nil),
		newRunCmd(io, nil),
		newShowCmd(io, nil),
		newCompareCmd(io, nil),
		newFlameCmd(io, nil),
		newServeCmd(io, nil),
		newSoakCmd(io, nil),
		newNewCmd(io, nil),
		newVersionCmd(io, nil),
		newRunsCmd(io, nil, nil),
		newRecoverCmd(io, nil),
	)
	listDefaults(root)
	argsCheckedHelp(root)
	return root
}

// Main runs the command line and returns the process exit code (exit.go):
// 0 on success, 1 on an error, 2 on a usage error, 3 when compare cannot
// make or judge a comparison, 130 when interrupted by Ctrl-C (SIGINT) and
// 143 by SIGTERM.
//
// SIGTERM (docker stop, systemd, timeout) is handled like Ctrl-C: a run
// saves what it measured and is marked incomplete, saying by which signal;
// serve shuts down gracefully. After the first signal the default handlers
// are back, so a second one ends the process at once.
func Main(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got atomic.Value // os.Signal
	go func() {
		sig := <-sigs
		got.Store(sig)
		signal.Stop(sigs)
		cancel(&signalError{sig})
	}()
	streams := &IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTerminal: isTerminal(os.Stderr), OutIsTerminal: isTerminal(os.Stdout), InIsTerminal: isTerminal(os.Stdin), Args: args, Cmd: commandName(os.Args[0])}
	root := NewRoot(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		writeError(streams, err)
	}
	code := exitCode(err)
	if sig, ok := got.Load().(os.Signal); ok && code == exitInterrupted && sig == syscall.SIGTERM {
		code = 128 + int(syscall.SIGTERM)
	}
	return code
}

// printError prints a command's error: with the store's hint, without the
// credentials of any URL in it, and with control characters escaped, since
// errors quote run.json, profiles and servers' answers. The hint names
// the command as streams.Cmd says.
func printError(w io.Writer, streams *IO, err error) {
	fmt.Fprintln(w, "perflab:", report.SafeText(store.RedactURL(err.Error()+hint(streams, err))))
}

// writeError is how Main says a command's error: wrapped at 80 columns,
// as every note on stderr is (noteWrapped), on a terminal or not. Errors
// were once left whole in a log or pipe, for grep; but a CI log is where a
// gate's reasons are read, and they ran to 100-190 columns there, beside
// notes wrapped at 80 ("N of M benchmarks failed …: names" at 87, "saving
// run (…)" at 122). A wrapped line still starts with what grep looks for
// (perflab:, a reason's case), and a word is never broken.
func writeError(streams *IO, err error) {
	printErrorWrapped(streams.Err, streams, err, 80)
}

// printErrorWrapped is printError wrapped: each line of the message
// broken at spaces into lines of at most width columns, a broken line's
// later parts indented under it (an error naming a variant's neighbours
// ran to 130 columns).
func printErrorWrapped(w io.Writer, streams *IO, err error, width int) {
	var b strings.Builder
	printError(&b, streams, err)
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if utf8.RuneCountInString(line) <= width {
			fmt.Fprintln(w, line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		parts := wrap(body, max(width-len(indent), 20))
		if len(parts) == 0 { // a line of spaces
			fmt.Fprintln(w, line)
			continue
		}
		fmt.Fprintln(w, indent+parts[0])
		// The later parts are indented two more, so they are wrapped two
		// narrower: wrapped as the first, they ran to width+2.
		for _, part := range wrap(strings.Join(parts[1:], " "), max(width-len(indent)-2, 20)) {
			fmt.Fprintln(w, indent+"  "+part)
		}
	}
}

// signalError is the cause of the context's end when a signal ends it: the
// run's note says by which.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string {
	switch e.sig {
	case os.Interrupt:
		return "by SIGINT"
	case syscall.SIGTERM:
		return "by SIGTERM"
	}
	return "by signal " + e.sig.String()
}

// hint says what to do about the store's errors, which name no command
// since the web shows them too.
func hint(io *IO, err error) string {
	switch {
	case errors.Is(err, store.ErrUnreadable):
		return " (`" + io.cmd("show --list") + "` says why)"
	case errors.Is(err, store.ErrNoStore):
		return " (is -o or $" + store.EnvDir + " right?)"
	case errors.Is(err, store.ErrNoRuns):
		return " (run `" + io.cmd("run <scenario>") + "` first)"
	case errors.Is(err, store.ErrNoRun):
		return " (see `" + io.cmd("show --list") + "`)"
	}
	return ""
}

// exitCode maps an error to the process exit code, in one place.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case isUsageError(err), notFound(err):
		// A run, case or store that is not there is the caller's
		// mistake, like an unknown scenario: never 1, which compare
		// --fail-on gives a regression.
		return exitUsage
	}
	return exitFailed
}

// notFound says err is the store's: no such run, case or id.
func notFound(err error) bool {
	return errors.Is(err, store.ErrNoRun) || errors.Is(err, store.ErrNoRuns) || errors.Is(err, model.ErrNoCase) || errors.Is(err, store.ErrInvalidID)
}

// isTerminal says whether f is a terminal: a character device that
// answers the terminal's ioctl where the system has one (isTTY), not
// /dev/null, which is a character device too. Taking it for one,
// 'perflab flame RUN/CASE > /dev/null' refused to write SVG to a
// terminal, and 'runs prune < /dev/null' asked a question no one could
// answer instead of wanting --yes.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}
