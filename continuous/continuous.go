// Package continuous profiles a running Go service into Grafana Pyroscope,
// with perflab's wall-clock profile beside pyroscope-go's own.
//
// Start runs pyroscope-go's profiler (CPU, allocations, in-use memory,
// goroutines, mutex and block) and, every upload period, a window of the
// execution tracer turned into an exact wall-clock profile of every
// goroutine of the service: the time each spent running (split by its CPU
// samples), runnable, blocked and in system calls, at the stack where it
// spent it, with each off-CPU stack's category (lock, wait, sched, gc…) in
// its leaf frame. It arrives in Pyroscope as the wall type
// (wall:wall:nanoseconds:wall:nanoseconds), labelled like the rest, so
// `perflab flame --from-pyroscope` and `perflab serve --pyroscope` show a
// production service's time split into work, lock, wait and the rest exactly
// as they show a lab run's.
//
// Why the tracer and not a sampler: sampling the goroutine profile (fgprof)
// gets blocked time wrong — with a quarter of each operation's hashing
// under a mutex, time inside Lock was ~5% by the clock yet fgprof showed
// ~30% (perflab issue 9); the tracer records every state change with its
// time, so blocked and runnable time is exact. pyroscope-go has no
// wall-clock profile for Go at all (grafana/pyroscope-go#26).
//
// Uploads are best effort, as a continuous agent's should be: from
// background goroutines, through a bounded queue that drops when the server
// is slower than the profiles come; failures are counted, logged and
// returned by stop, never fatal. Profiles over the server's default limits
// are refused before sending with an error that names the label.
//
// Handler serves the same wall-clock profile on demand, for `go tool pprof`.
// StartSession is Start for a program that also chooses windows itself and
// labels them (perflab soak: one per turn of a case, with the case's
// labels); Config.WallRegion limits the profile to goroutines inside a
// runtime/trace region.
//
// The profile counts every goroutine but the runtime's (GC workers, the
// sweeper, the scavenger…), the tracer's and the profilers' own, by the
// function each was started with. Each traced window costs the tracer's
// overhead while it runs and the parsing of the trace after; `make bench`
// measures both on perflab's built-in scenarios (BenchmarkWallOverhead).
package continuous

import (
	"context"
	"errors"
	"fmt"
	"log"
	"runtime"
	"sync"
	"time"

	"github.com/grafana/pyroscope-go"
	ipyro "github.com/perflab/perflab/internal/pyroscope"
	"github.com/perflab/perflab/profiles"
)

// Config says where to send profiles and what to profile.
type Config struct {
	// ApplicationName is the service_name label. Required.
	ApplicationName string
	// ServerAddress is the Pyroscope server, e.g. http://pyroscope:4040. A
	// user:password in it is sent as basic auth. Required.
	ServerAddress string
	// Tags label every profile (names: letters, digits and _).
	Tags map[string]string
	// TenantID is sent as X-Scope-OrgID; BasicAuthUser and
	// BasicAuthPassword as basic auth (Grafana Cloud).
	TenantID          string
	BasicAuthUser     string
	BasicAuthPassword string

	// ProfileTypes are pyroscope-go's profiles; nil means all of CPU,
	// allocated and in-use objects and space, goroutines, mutex and block.
	ProfileTypes []pyroscope.ProfileType
	// UploadRate is the period of every profile, pyroscope-go's and the
	// wall-clock one (default 15 s).
	UploadRate time.Duration
	// WallWindow is how much of each period the tracer records for the
	// wall-clock profile (default 5 s: a third of the time, which keeps its
	// cost within 3% on perflab's scenarios; see BenchmarkWallOverhead).
	// Values are exact goroutine time within the window, not scaled up to
	// the period. Negative means no wall-clock profile.
	WallWindow time.Duration
	// Rules classify the wall-clock profile's off-CPU stacks; nil means
	// profiles.DefaultRules().
	Rules *profiles.Rules
	// WallRegion, if set, limits the wall-clock profiles to the goroutines
	// inside runtime/trace regions of this type (trace.WithRegion around a
	// request handler, say), for as long as they are inside: the time of
	// that work, without the service's idle goroutines. Empty counts every
	// goroutine but the runtime's and the profilers'.
	WallRegion string

	// MutexProfileFraction and BlockProfileRate are set for the mutex and
	// block profiles while profiling, and restored by stop: defaults 5 (one
	// contention event in five) and 10000 (every block of 10 µs or more,
	// shorter ones sampled), perflab's own. Negative leaves the runtime's
	// setting alone.
	MutexProfileFraction int
	BlockProfileRate     int

	// Logger gets pyroscope-go's messages and upload failures; nil logs
	// errors with the standard log package.
	Logger pyroscope.Logger
}

// DefaultProfileTypes are the pyroscope-go profiles Start runs when
// Config.ProfileTypes is nil.
var DefaultProfileTypes = []pyroscope.ProfileType{
	pyroscope.ProfileCPU,
	pyroscope.ProfileAllocObjects, pyroscope.ProfileAllocSpace,
	pyroscope.ProfileInuseObjects, pyroscope.ProfileInuseSpace,
	pyroscope.ProfileGoroutines,
	pyroscope.ProfileMutexCount, pyroscope.ProfileMutexDuration,
	pyroscope.ProfileBlockCount, pyroscope.ProfileBlockDuration,
}

// Defaults.
const (
	DefaultUploadRate = 15 * time.Second
	DefaultWallWindow = 5 * time.Second
	defaultMutex      = 5
	defaultBlockNs    = 10_000
)

// stopTimeout bounds stop: the last uploads, and the wait for them (a
// variable for tests).
var stopTimeout = 10 * time.Second

// Start starts profiling and returns the function that stops it: stop
// uploads the last profiles (waiting up to 10 s for the server), restores
// the mutex and block profile rates, and returns an error that counts the
// uploads that failed, if any did. Only one Start may run in a process: it
// takes the CPU profiler, and the tracer for its windows.
func Start(cfg Config) (stop func() error, err error) {
	s, err := StartSession(cfg)
	if err != nil {
		return nil, err
	}
	return s.Stop, nil
}

// Session is a running profiler, as Start starts it, that can also trace
// wall-clock windows when its program chooses and label them: perflab soak
// traces one for each turn of a case, labelled with the case.
type Session struct {
	cfg  Config
	bg   *ipyro.Background
	stop func(deadline time.Time) error

	stopOnce sync.Once
	stopErr  error
	// mu guards stopped and open: the windows Wall began that are not
	// ended yet, which Stop ends and uploads before the last uploads.
	mu      sync.Mutex
	stopped bool
	open    map[*window]struct{}
}

// ErrStopped is Wall's error after Stop, and wrapped by a window's end when
// Stop ended the window first (its profile was uploaded then, with the
// last ones, as end would have).
var ErrStopped = errors.New("continuous: the session was stopped")

// window is one window Wall began: ended once, by its end or by Stop.
type window struct {
	once   sync.Once
	finish func() error // ends the trace and queues the profile
	err    error
	byStop bool
}

// StartSession is Start returning the Session; its Stop is Start's stop.
func StartSession(cfg Config) (*Session, error) {
	if cfg.ApplicationName == "" {
		return nil, errors.New("continuous: Config.ApplicationName is required (it is the service_name label)")
	}
	if cfg.ServerAddress == "" {
		return nil, errors.New("continuous: Config.ServerAddress is required, e.g. http://127.0.0.1:4040")
	}
	if cfg.UploadRate <= 0 {
		cfg.UploadRate = DefaultUploadRate
	}
	if cfg.WallWindow == 0 {
		cfg.WallWindow = DefaultWallWindow
	}
	if cfg.WallWindow > cfg.UploadRate {
		cfg.WallWindow = cfg.UploadRate
	}
	if cfg.ProfileTypes == nil {
		cfg.ProfileTypes = DefaultProfileTypes
	}
	if cfg.Rules == nil {
		cfg.Rules = profiles.DefaultRules()
	}
	if cfg.Logger == nil {
		cfg.Logger = stdLogger{}
	}
	if err := checkLabels(cfg.ApplicationName, cfg.Tags, nil); err != nil {
		return nil, err
	}

	bg, err := ipyro.NewBackground(cfg.ServerAddress, ipyro.Config{TenantID: cfg.TenantID, BasicAuthUser: cfg.BasicAuthUser, BasicAuthPassword: cfg.BasicAuthPassword}, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("continuous: %w", err)
	}
	restore := setRates(cfg.MutexProfileFraction, cfg.BlockProfileRate)
	rc := bg.RemoteConfig(nil)
	prof, err := pyroscope.Start(pyroscope.Config{
		ApplicationName:   cfg.ApplicationName,
		Tags:              cfg.Tags,
		ServerAddress:     rc.Address,
		BasicAuthUser:     rc.BasicAuthUser,
		BasicAuthPassword: rc.BasicAuthPassword,
		TenantID:          rc.TenantID,
		UploadRate:        cfg.UploadRate,
		Logger:            bg.Logger(),
		ProfileTypes:      cfg.ProfileTypes,
		HTTPClient:        bg.HTTPClient("pyroscope-go"),
	})
	if err != nil {
		restore()
		bg.Stop()
		return nil, fmt.Errorf("continuous: %w", err)
	}
	for _, t := range cfg.ProfileTypes {
		if t == pyroscope.ProfileCPU {
			cpuByStart.Store(true)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if cfg.WallWindow > 0 {
		w := &waller{cfg: cfg, bg: bg}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
		}()
	}
	var once sync.Once
	var stopErr error
	stop := func(deadline time.Time) error {
		once.Do(func() {
			cancel()
			wg.Wait()
			// Within 10 s in all, however slow the server: what has not
			// been uploaded then is aborted and counted as failed. The
			// last windows' ends (trace.Stop, parsing the trace) are in
			// the 10 s: under -race beside a spinning process they took
			// up to 0.8 s, and stop took 2.8 s at a 2 s timeout.
			flushed := bg.Close(max(time.Until(deadline), 0), func() { prof.Flush(true) }, func() { prof.Stop() })
			restore()
			cpuByStart.Store(false)
			st := bg.Stats()
			switch {
			case st.Failed+st.Dropped+st.Refused > 0:
				stopErr = fmt.Errorf("continuous: %s; last: %s", st, st.LastError)
			case !flushed:
				stopErr = fmt.Errorf("continuous: %s; %w", st, ErrUnfinished)
			}
		})
		return stopErr
	}
	return &Session{cfg: cfg, bg: bg, stop: stop, open: map[*window]struct{}{}}, nil
}

// ErrUnfinished is wrapped by Stop's error when the last uploads had not
// finished within 10 s and were aborted.
var ErrUnfinished = errors.New("the last uploads did not finish within 10 s")

// checkLabels checks tags and labels are valid names within the server's
// default limits, with the SDK's own labels.
func checkLabels(service string, tags, labels map[string]string) error {
	all := ipyro.SDKLabels()
	for _, m := range []map[string]string{tags, labels} {
		for k, v := range m {
			if ipyro.LabelName(k) != k {
				return fmt.Errorf("continuous: tag %q: label names may only use letters, digits and _ (not starting with a digit or __); say %q", k, ipyro.LabelName(k))
			}
			all[k] = v
		}
	}
	if err := ipyro.DefaultLimits.CheckLabels(service, all); err != nil {
		return fmt.Errorf("continuous: %w", err)
	}
	return nil
}

// Stop stops profiling: it ends the windows of Wall still open and uploads
// their profiles with the last ones (waiting up to 10 s for the server),
// restores the mutex and block profile rates, and returns an error that
// counts the uploads that failed, if any did (wrapping ErrUnfinished if
// they were cut short), and says which open window could not be made.
// Later calls return the same; Wall after Stop returns ErrStopped.
func (s *Session) Stop() error {
	s.stopOnce.Do(func() {
		deadline := time.Now().Add(stopTimeout)
		s.mu.Lock()
		s.stopped = true
		open := s.open
		s.open = nil
		s.mu.Unlock()
		// A window left open was a profile silently lost: its end, after
		// the uploader stopped, queued it nowhere (issue 24 review).
		var errs []error
		for w := range open {
			if err := s.endWindow(w, true); err != nil {
				errs = append(errs, fmt.Errorf("continuous: a wall-clock window open at Stop: %w", err))
			}
		}
		s.stopErr = errors.Join(append([]error{s.stop(deadline)}, errs...)...)
	})
	return s.stopErr
}

// endWindow ends w once, by its end or by Stop (byStop), and returns the
// result of that first ending.
func (s *Session) endWindow(w *window, byStop bool) error {
	w.once.Do(func() {
		w.err, w.byStop = w.finish(), byStop
		s.mu.Lock()
		delete(s.open, w)
		s.mu.Unlock()
	})
	return w.err
}

// Stats counts a session's uploads.
type Stats struct {
	// Sent counts the uploads the server accepted, by source: "wall" for
	// the wall-clock profiles, "pyroscope-go" for pyroscope-go's.
	Sent map[string]int64
	// Bytes is the size of the accepted uploads' bodies.
	Bytes int64
	// Failed counts uploads the server refused or that could not reach it.
	Failed int64
	// Dropped counts uploads dropped because the queue was full (the server
	// is slower than the profiles come).
	Dropped int64
	// Refused counts profiles not sent: over the server's limits, or not
	// encodable.
	Refused int64
	// LastError is the last failure or refusal, "" if none.
	LastError string
}

// SentTotal is the number of accepted uploads from every source.
func (s Stats) SentTotal() int64 { return ipyro.Stats(s).SentTotal() }

// String summarises the stats on one line: "sent 12 (pyroscope-go 8, wall
// 4), 0 failed, 0 dropped".
func (s Stats) String() string { return ipyro.Stats(s).String() }

// Stats counts the session's uploads so far.
func (s *Session) Stats() Stats { return Stats(s.bg.Stats()) }

// Wall starts a wall-clock window now, of the goroutines Config.WallRegion
// chooses (every one if it is empty), and returns the function that ends
// it and uploads its profile, labelled with the session's Tags and labels
// (labels win where they name the same). The window waits for one of
// Start's own that is running; Config.WallWindow < 0 turns those off, for
// a program that chooses all its windows. Upload failures are counted in
// Stats; end returns the window's own failure, or the upload's refusal
// (a label over the server's limits). end may be called more than once,
// and returns what the first call did; when Stop came first, Stop ended
// the window and uploaded its profile, and end's error wraps ErrStopped.
// After Stop, Wall returns ErrStopped.
func (s *Session) Wall(labels map[string]string) (end func() error, err error) {
	if s.isStopped() {
		return nil, ErrStopped
	}
	if err := checkLabels(s.cfg.ApplicationName, s.cfg.Tags, labels); err != nil {
		return nil, err
	}
	all := make(map[string]string, len(s.cfg.Tags)+len(labels))
	for _, m := range []map[string]string{s.cfg.Tags, labels} {
		for k, v := range m {
			all[k] = v
		}
	}
	t, err := beginWall(s.cfg.Rules, s.cfg.WallRegion, true)
	if err != nil {
		return nil, err
	}
	w := &window{finish: func() error {
		wp, err := t.end()
		if err != nil {
			return err
		}
		return s.bg.Upload(ipyro.KindWall, s.cfg.ApplicationName, all, wp.profile, wp.start, wp.end)
	}}
	s.mu.Lock()
	if s.stopped {
		// Stop ran while this window waited for the tracer: nothing
		// would upload its profile.
		s.mu.Unlock()
		t.end()
		return nil, ErrStopped
	}
	s.open[w] = struct{}{}
	s.mu.Unlock()
	return func() error {
		err := s.endWindow(w, false)
		if w.byStop {
			if err != nil {
				return fmt.Errorf("%w before this window's end, which it ended: %w", ErrStopped, err)
			}
			return fmt.Errorf("%w before this window's end: it ended the window and uploaded its profile", ErrStopped)
		}
		return err
	}, nil
}

func (s *Session) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// setRates sets the mutex and block profile rates and returns what
// restores them.
func setRates(mutex, block int) (restore func()) {
	var undo []func()
	if mutex >= 0 {
		if mutex == 0 {
			mutex = defaultMutex
		}
		prev := runtime.SetMutexProfileFraction(mutex)
		undo = append(undo, func() { runtime.SetMutexProfileFraction(prev) })
	}
	if block >= 0 {
		if block == 0 {
			block = defaultBlockNs
		}
		runtime.SetBlockProfileRate(block)
		// The runtime has no getter for the block rate: off is the
		// default, and what a program that set it itself would have us
		// leave alone by passing a negative rate.
		undo = append(undo, func() { runtime.SetBlockProfileRate(0) })
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// waller makes and uploads the periodic wall-clock profiles.
type waller struct {
	cfg        Config
	bg         *ipyro.Background
	busyLogged bool
}

func (w *waller) run(ctx context.Context) {
	t := time.NewTicker(w.cfg.UploadRate)
	defer t.Stop()
	for {
		w.window(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// window traces one window (cut short when ctx ends, so stop uploads what
// it has) and uploads its profile.
func (w *waller) window(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, w.cfg.WallWindow)
	defer cancel()
	wp, err := traceWall(wctx, w.cfg.Rules, w.cfg.WallRegion, false)
	if err != nil {
		if errors.Is(err, errOwnWindow) {
			return
		}
		if errors.Is(err, errTracerBusy) {
			// Someone else is tracing (/debug/pprof/trace, a test):
			// skip this window, and say so once.
			if !w.busyLogged {
				w.busyLogged = true
				w.cfg.Logger.Errorf("perflab continuous: wall-clock profile skipped: %v", err)
			}
			return
		}
		w.cfg.Logger.Errorf("perflab continuous: wall-clock profile: %v", err)
		return
	}
	if err := w.bg.Upload(ipyro.KindWall, w.cfg.ApplicationName, w.cfg.Tags, wp.profile, wp.start, wp.end); err != nil {
		w.cfg.Logger.Errorf("perflab continuous: wall-clock profile not sent: %v", err)
	}
}

// stdLogger logs errors only, with the standard logger.
type stdLogger struct{}

func (stdLogger) Infof(string, ...any)      {}
func (stdLogger) Debugf(string, ...any)     {}
func (stdLogger) Errorf(f string, a ...any) { log.Printf(f, a...) }
