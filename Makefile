# perflab — see README.md. `make run` and `make test` are the two commands a
# new user needs; the others are for developers.
GO ?= go
RUN_ARGS ?=

.PHONY: build run test truth truth-loaded fuzz load bench check fmt staticcheck

build:
	$(GO) build -o bin/perflab ./cmd/perflab

run:
	$(GO) run ./cmd/perflab run cipher-cache $(RUN_ARGS)

# One package at a time (-p 1): several tests hold measurements against
# each other in one process (TestAA's identical variants, the continuous
# profiler's window, the wall-clock recorder's stays), and on 2 cores a
# second package's tests beside them are an outside load. Under two
# spinning shells TestAA flagged identical variants in 2-3 of 12 trials
# (it allows 1), and CI failed it once beside internal/cli's 85 s of tests.
# Serial, the suite takes about a minute and a half longer.
#
# PERFLAB_TIMING_TESTS=1 turns on the tests whose figures hold only on a
# quiet machine (internal/timingtest); a plain go test ./... skips them.
test:
	$(GO) vet ./...
	$(MAKE) browser
	# -timeout 30m: under -race on a busy 2-core machine (load 10-14) ./web
	# took 540 s and ./profiles/flame 450 s, near go test's default 10 m.
	PERFLAB_TIMING_TESTS=1 $(GO) test -race -p 1 -timeout 30m ./...
	# Timing without the race detector: the tests whose figures do not
	# hold under it either (timingtest.RequireNoRace).
	PERFLAB_TIMING_TESTS=1 $(GO) test -count=1 -p 1 -run '^(TestHandler|TestStart|TestSoak)$$' ./continuous ./internal/cli
	$(MAKE) truth truth-loaded

# The browser tests are a module of their own (browsertests/, as
# google/pprof's are), so chromedp is no dependency of perflab's module.
.PHONY: browser
browser:
	cd browsertests && $(GO) vet ./... && $(GO) test -race ./...

# The ground-truth suite of the time budget: instrumented variants through
# the real runner, every budget share held against the workers' own timing.
# It skips itself under -race (timings change), so it runs here without.
truth:
	$(GO) test -count=1 -timeout 30m -run Truth ./internal/truth/

# The same suite beside one process spinning on a CPU (issue 22: the budget
# holds quiet and beside one spinning process, both in CI). The spinner is
# the test binary itself, started and stopped by the test; it exits when
# the test's process does, however that ends.
truth-loaded:
	$(GO) test -count=1 -timeout 30m -run Truth ./internal/truth/ -truth.spin=1

# Fuzzing with invariants, bounded (issue 14): each target for FUZZTIME on
# its committed corpus (testdata/fuzz) and the hostile shapes it seeds.
# About a minute on 2 cores; .ci/run calls it after make test.
# FUZZMIN bounds the minimising of each new input: at Go's default of 60 s
# the workers stop fuzzing while they minimise (golang/go#48820), and
# FuzzParseRules ran 62,000 inputs in 30 s, none after its sixth second;
# with 1 s, 754,000 in 20 s. A crasher is saved, minimised or not.
FUZZTIME ?= 10s
FUZZMIN ?= 1s
FUZZFLAGS = -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN)
fuzz:
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzRead$$' ./profiles
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzParseRules$$' ./profiles
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzFlame$$' ./profiles/flame
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzReadSource$$' ./profiles/flame
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzClientAnswer$$' ./internal/pyroscope
	$(GO) test $(FUZZFLAGS) -fuzz '^FuzzUpload$$' ./web

# The web load check in a short bounded form (CI): 32 clients, 1,000
# requests or 20 s, zero errors. make bench runs the long one.
load:
	$(GO) test -run '^TestLoad$$' -count 1 ./web -load -load-requests 1000 -load-time 20s

bench:
	# harness: overhead and agreement vs testing.B, wall-profiler overhead (ratios)
	$(GO) test -run '^$$' -bench 'RepetitionOverhead|AgreementSHA256|WallProfilerOverhead' -benchtime 1x ./internal/runner
	# the execution tracer's cost per hand-off and per fan-out to two new
	# goroutines (the runtime's, no target), and on each built-in scenario's
	# throughput, paired 1 s windows (fails above 5%)
	$(GO) test -run '^$$' -bench 'TracerHandoff|TracerFanout|TracerOverhead' -benchtime 1x ./internal/runner
	# the context-switch recorder's wake-ups, adaptive and fixed 5 ms, on an allocating loop (ratios, no target)
	$(GO) test -run '^$$' -bench 'RecorderWakeups' -benchtime 1x ./internal/ctxswitch
	# the continuous wall-clock profiler's cost on each built-in scenario, paired (fails above 3%)
	$(GO) test -run '^$$' -bench 'WallOverhead' -benchtime 1x ./continuous
	$(GO) test -run '^$$' -bench . -benchtime 1x ./scenarios/...
	$(GO) test -run '^$$' -bench . -benchtime 3x ./profiles/...
	# compare of two runs of 2k, 8k and 30k cases, loading included: ns/case flat (issue 26)
	$(GO) test -run '^$$' -bench 'CompareCases' -benchtime 1x ./internal/cli
	# flame graphs at the limit: 100k and 1M stacks drawn against pprof -raw, alternately in one run;
	# fails above 0.40× (100k) or 0.33× and 1.2 GB (1M: 5 s of pprof's 15.2 s here; issues 13, 26)
	$(GO) test -run '^TestDrawLimit$$' -count 1 -v -timeout 30m ./profiles/flame -limit
	# peak memory of a web upload of the 100k-stack profile (target 300 MB)
	$(GO) test -run '^TestUploadLimit$$' -count 1 -v ./web -upload-limit
	# web UI load check: concurrent clients on loopback, bounded requests
	$(GO) test -run '^TestLoad$$' -count 1 -v ./web -load

# staticcheck at a version the module proxy serves here; go run caches it.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
check: fmt staticcheck test

staticcheck:
	$(STATICCHECK) ./...
	cd browsertests && $(STATICCHECK) ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
