package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/internal/lab"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/web"
	"github.com/spf13/cobra"
)

// ServeOptions are the flags of `perflab serve`.
type ServeOptions struct {
	Addr string
	Dir  string
	// Pyroscope is a server to read merged profiles from (/pyroscope).
	Pyroscope string
	// ready, if set, receives the listening address (tests).
	ready func(addr string)
}

// deprecatedDir is serve's old name for its store flag, now -o/--out.
const deprecatedDir = "dir"

func newServeCmd(io *IO, runF runFunc[ServeOptions]) *cobra.Command {
	opts := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the stored runs as web pages",
		Long: `serve starts a web server over the run store: the list of runs, each run's
results and charts, each case's profiles and flame graph, comparisons of two
cases with a statistical verdict, and a viewer for pprof files you upload.

It listens on 127.0.0.1:8080 and answers only clients on this machine. To let
other machines in, listen on another address, e.g. --addr :8080.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed(deprecatedDir) {
				fmt.Fprintln(io.Err, "perflab: serve --dir is deprecated: name the store with -o/--out, as run, show and compare do")
			}
			return runF.or(serveRun)(cmd.Context(), io, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "address to listen on; a non-loopback address opens the server to other machines")
	cmd.Flags().StringVar(&opts.Pyroscope, "pyroscope", "", "also read merged profiles from the Pyroscope server at `URL` (page /pyroscope)")
	// -o/--out names the store, as in every other command that reads or
	// writes one. serve's was --dir, kept (hidden) so that no script
	// breaks; RunE says to use --out. Not cobra's MarkDeprecated: it
	// prints its notice on the command's output, stdout here.
	storeFlag(cmd.Flags(), &opts.Dir)
	cmd.Flags().StringVar(&opts.Dir, deprecatedDir, "", "run store directory (deprecated: -o/--out)")
	cmd.Flags().MarkHidden(deprecatedDir)
	return cmd
}

func serveRun(ctx context.Context, io *IO, opts *ServeOptions) error {
	dir := store.Dir(opts.Dir)
	wopts := web.Options{MakeRun: makeRunHint(io, dir)}
	if opts.Pyroscope != "" {
		c, err := pyroscopeClient(opts.Pyroscope, "", "", "")
		if err != nil {
			return err
		}
		wopts.Profiles = c
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return usagef(fmt.Errorf("cannot listen on %s: %w", opts.Addr, err))
	}
	remote := !web.LoopbackOnly(opts.Addr)
	wopts.AllowRemote = remote
	h := web.New(dir, wopts)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // uploads on slow links
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(io.Err, "perflab: serving runs from %s on http://%s/ (Ctrl-C to stop)\n", dir, ln.Addr())
	if wopts.Profiles != nil {
		fmt.Fprintf(io.Err, "perflab: reading profiles from Pyroscope at %s on http://%s/pyroscope\n", wopts.Profiles.URL(), ln.Addr())
	}
	if remote {
		fmt.Fprintf(io.Err, "perflab: %s is not a loopback address: other machines can read these runs\n", opts.Addr)
	}
	if opts.ready != nil {
		opts.ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Let requests in flight finish, but do not wait long for them.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(io.Err, "perflab: server stopped")
	return nil
}

// makeRunHint is the command an empty store's page suggests: a run of
// cipher-cache where this binary has it, else of the first scenario it
// has (a module of one's own, from perflab new), by the command the user
// ran perflab with, into dir, the store served (without -o, serve -o DIR
// said to make a run the page never showed).
func makeRunHint(io *IO, dir string) string {
	all := perflab.Scenarios()
	name := "<scenario>"
	for i, s := range all {
		if i == 0 || s.Name == "cipher-cache" {
			name = s.Name
		}
	}
	return io.cmd("run " + name + lab.StoreArg(dir))
}
