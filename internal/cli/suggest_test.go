package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
)

// TestDidYouMean: a typo in a command, a scenario, a variant, a
// parameter, a parameter's value, a flag or a profile kind is answered
// with what was meant, so the user fixes it in one try; lists are
// written as words, never as Go slices.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	storeRun(t, store.Open(dir), time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), map[string][]float64{
		"variant=mutex/keys=128/threads=1": {100, 101, 99}, "variant=sum256/keys=128/threads=1": {90, 91, 89}})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"command", []string{"runn"}, `unknown command "runn" for "perflab": did you mean run or runs? (see perflab --help)`},
		{"command, transposed", []string{"sohw"}, `did you mean show?`},
		{"the gate, by the manual's name for it", []string{"gate"}, `unknown command "gate" for "perflab": the CI gate is perflab compare OLD NEW --fail-on regression (see perflab --help)`},
		{"nothing close", []string{"deploy"}, `unknown command "deploy" for "perflab" (see perflab --help)`},
		{"scenario", []string{"run", "cipher-cach"}, `unknown scenario "cipher-cach": did you mean cipher-cache? (run ` + "`perflab list`)"},
		{"scenario in list", []string{"list", "cipher-cach"}, `did you mean cipher-cache?`},
		{"variant", []string{"run", "cipher-cache", "--variant", "mutx"}, `scenario cipher-cache has no variant "mutx": did you mean mutex? (variants: mutex, rwmutex, sharded, nocache-pool, nocache, sum256)`},
		{"parameter", []string{"run", "cipher-cache", "-p", "kyes=128"}, `scenario cipher-cache has no parameter "kyes": did you mean keys? (parameters: keys, key, threads)`},
		{"parameter, several scenarios", []string{"run", "cipher-cache", "test-broken", "-p", "kyes=128"}, `none of cipher-cache, test-broken has a parameter "kyes": did you mean keys?`},
		{"variant, several scenarios", []string{"run", "cipher-cache", "test-broken", "--variant", "panic"}, `--variant panic: none of cipher-cache, test-broken has that variant: did you mean panics?`},
		{"value", []string{"run", "cipher-cache", "-p", "key=sk"}, `parameter key: unknown value "sk": did you mean ssk? (one of ssk, chk)`},
		{"flag", []string{"run", "cipher-cache", "--varient", "mutex"}, `unknown flag --varient: did you mean --variant?`},
		{"flag with one dash", []string{"run", "cipher-cache", "-varient", "mutex"}, `unknown flag -varient: did you mean --variant? (long flags take two dashes)`},
		{"flag, nothing close", []string{"run", "cipher-cache", "--frobnicate"}, `unknown flag --frobnicate (see perflab run --help)`},
		{"profile", []string{"run", "cipher-cache", "--profile", "mutx"}, `--profile mutx: unknown profile "mutx": did you mean mutex? (want wall, cpu, mutex, block, fgprof or none)`},
		{"profile none with others", []string{"run", "cipher-cache", "--profile", "none,wall"}, `--profile none,wall: none cannot be combined with profiles: give --profile none alone, or the profiles to capture`},
		{"compare base", []string{"compare", "latest", "--base", "mutx", "-o", dir}, `has no variant "mutx": did you mean mutex? (it has `},
		{"push profile", []string{"push", "latest", "--url", "http://127.0.0.1:1", "--profile", "wal", "-o", dir}, `--profile "wal": unknown profile: did you mean wall? (want wall, cpu, mutex or block)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := execute(t, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errs, tt.want)
			}
			if strings.Contains(errs, "[") {
				t.Errorf("a Go slice in the message: %s", errs)
			}
		})
	}
}

// TestNoStoreHint: a store whose directory is not there is told apart
// from an empty one. A typo in -o was answered "run `perflab run
// <scenario>` first", which sends the user to measure again what is
// stored elsewhere.
func TestNoStoreHint(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		name, dir, want, not string
	}{
		{"empty store", empty, "no runs in " + empty + " (run `perflab run <scenario>` first)", "no such directory"},
		{"no such directory", empty + "-typo", "no runs in " + empty + "-typo: no such directory (is -o or $PERFLAB_DIR right?)", "first)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := executeWithin(t, 10*time.Second, "show", "-o", tt.dir)
			if code != 2 || !strings.Contains(errs, tt.want) || strings.Contains(errs, tt.not) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2, %q and not %q", code, errs, tt.want, tt.not)
			}
		})
	}
}
