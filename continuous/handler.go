package continuous

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/perflab/perflab/profiles"
)

// Handler limits on ?seconds=N.
const (
	defaultHandlerSeconds = 10
	maxHandlerSeconds     = 120
)

// Handler returns an HTTP handler that records the execution trace for
// ?seconds=N (default 10, at most 120) and answers with the wall-clock
// profile of every goroutine in that time, as gzipped pprof: mount it at
// /debug/perflab/wall and read it with
//
//	go tool pprof -http : 'http://host:port/debug/perflab/wall?seconds=10'
//	perflab flame wall.pb.gz -o wall.html
//
// The profile's sample type is wall/nanoseconds; each off-CPU sample's leaf
// frame names its category and state ("[lock] blocked (sync)"), and a
// "state" label says running, runnable, blocked or syscall. It works with
// or without Start; a request waits for a periodic window of Start's that
// is running, and gets 409 Conflict while anything else is tracing. Like
// /debug/pprof, it shows the program's stacks: mount it only where
// /debug/pprof would be.
func Handler() http.Handler { return HandlerWithRules(nil) }

// HandlerWithRules is Handler with the service's own classification rules
// (for example profiles.ParseRules of a rules file saying "this channel is
// my lock"): off-CPU time is put in its category when it is recorded, so
// those rules must be known then. Running time is classified by whoever
// reads the profile (perflab flame --work). Nil means the built-in rules.
func HandlerWithRules(rules *profiles.Rules) http.Handler {
	if rules == nil {
		rules = profiles.DefaultRules()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveWall(w, r, rules) })
}

func serveWall(w http.ResponseWriter, r *http.Request, rules *profiles.Rules) {
	sec := defaultHandlerSeconds
	if s := r.FormValue("seconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > maxHandlerSeconds {
			http.Error(w, fmt.Sprintf("seconds=%q: want a whole number of seconds from 1 to %d", s, maxHandlerSeconds), http.StatusBadRequest)
			return
		}
		sec = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(sec)*time.Second)
	defer cancel()
	wp, err := traceWall(ctx, rules, "", true)
	switch {
	case isBusy(err):
		http.Error(w, "wall-clock profile: "+err.Error()+"; try again when it is done", http.StatusConflict)
		return
	case r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		http.Error(w, "wall-clock profile: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="wall.pb.gz"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := wp.profile.Write(w); err != nil {
		// Headers are sent; all that is left is to cut the body short.
		panic(http.ErrAbortHandler)
	}
}
