// Package browsertests drives perflab's web UI in a real headless Chromium.
// It is a module of its own, as google/pprof's browsertests are, so that
// chromedp and its protocol bindings are no dependency of perflab's
// module: `make test` runs it (cd browsertests && go test ./...).
package browsertests

// Browser tests: the pages in a real headless Chromium (Debian's package),
// driven with chromedp. One browser serves the whole suite; each step saves
// a screenshot under the artifact directory ($PERFLAB_ARTIFACTS, default
// test-artifacts/web at the repository root, which git ignores).

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/web"
	"github.com/perflab/perflab/web/webtest"
)

// chromiumPath finds the browser: $PERFLAB_CHROMIUM, then Debian's
// /usr/bin/chromium, then chromium on $PATH.
func chromiumPath() string {
	if p := os.Getenv("PERFLAB_CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

func artifactDir(t *testing.T) string {
	dir := os.Getenv("PERFLAB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "test-artifacts")
	}
	dir = filepath.Join(dir, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type browser struct {
	t       *testing.T
	ctx     context.Context
	base    string
	shots   string
	mu      sync.Mutex
	console []string
}

func newBrowser(t *testing.T, base string) *browser {
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed, and browser tests must run in CI: .ci/run installs it with apt-get install chromium")
		}
		t.Skip("skipping browser tests: Chromium not found (apt-get install chromium, or set PERFLAB_CHROMIUM); they run in CI")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // root in CI containers
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// This machine has no network: keep Chromium from trying.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-dev-shm-usage", true), // small /dev/shm in containers
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	b := &browser{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			// The error pages the tests visit on purpose log their status.
			if strings.Contains(m.Text, "status of 404") {
				continue
			}
			if m.IsException() || m.Type == "error" || m.Type == "warning" {
				b.mu.Lock()
				b.console = append(b.console, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs steps with a timeout, failing the test on error.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// waitFor evaluates js until it is true, riding out navigations (which
// abort a running evaluation), or fails after 15 s.
func (b *browser) waitFor(js string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("waiting for %s: timed out (last error: %v)", js, last)
}

func (b *browser) open(path string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), chromedp.WaitReady("body"))
}

// shot saves a full-page PNG screenshot as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// noConsoleErrors fails on script errors or CSP violations seen so far.
func (b *browser) noConsoleErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		b.t.Errorf("browser console: %s", m)
	}
	b.console = nil
}

func (b *browser) viewport(w, h int64, mobile bool) {
	b.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	b.do(chromedp.EmulateViewport(w, h, opts...))
}

type point struct{ X, Y float64 }

// findFrame hovers over the flame canvas until the details line names fn,
// and returns that point in page coordinates.
func (b *browser) findFrame(fn string) point {
	b.t.Helper()
	p := eval[*point](b, fmt.Sprintf(`(() => {
		const c = document.querySelector("#flame canvas");
		c.scrollIntoView({block: "center"});
		const r = c.getBoundingClientRect();
		const d = document.querySelector("#flame .pf-details");
		for (let y = r.top + 2; y < r.bottom; y += 4)
			for (let x = r.left + 2; x < r.right; x += 5) {
				c.dispatchEvent(new MouseEvent("mousemove", {clientX: x, clientY: y, bubbles: true}));
				if (d.textContent.startsWith(%q + " — ")) return {X: x + 2, Y: y};
			}
		return null; })()`, fn))
	if p == nil {
		b.t.Fatalf("no frame %s on the flame graph", fn)
	}
	return *p
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests are not short")
	}
	f := webtest.WriteFixture(t, t.TempDir())
	srv := httptest.NewServer(web.New(f.Root, web.Options{MaxUpload: 1 << 20, Logf: t.Logf}))
	defer srv.Close()
	b := newBrowser(t, srv.URL)
	run := f.Full

	t.Run("runs", func(t *testing.T) {
		b.t = t
		b.open("/")
		if n := eval[int](b, `document.querySelectorAll("table.runs tbody tr").length`); n != 3 {
			t.Errorf("runs table has %d rows, want 3", n)
		}
		b.shot("runs")
		// The scenario filter submits itself when changed.
		b.do(chromedp.Evaluate[chromedp.Void](`(s => { s.value = "broken"; s.dispatchEvent(new Event("change")); })(document.getElementById("scenario"))`))
		b.waitFor(`location.search.includes("scenario=broken") && document.readyState === "complete"`)
		if n := eval[int](b, `document.querySelectorAll("table.runs tbody tr").length`); n != 1 {
			t.Errorf("filtered runs table has %d rows, want 1", n)
		}
		b.noConsoleErrors()
	})

	t.Run("run", func(t *testing.T) {
		b.t = t
		b.open("/runs/" + run.ID)
		if n := eval[int](b, `document.querySelectorAll("section.group").length`); n != 4 {
			t.Errorf("%d parameter groups, want 4", n)
		}
		bars := eval[int](b, `document.querySelectorAll("svg.chart g.bar rect").length`)
		stacks := eval[int](b, `document.querySelectorAll("svg.chart g.stack rect").length`)
		lines := eval[int](b, `document.querySelectorAll("figure.scaling polyline").length`)
		if bars != len(run.Cases) || stacks < len(run.Cases) || lines != 6 {
			t.Errorf("charts: %d bars, %d budget segments, %d scaling lines; want %d, ≥%d, 6", bars, stacks, lines, len(run.Cases), len(run.Cases))
		}
		// Bars are drawn to scale: rwmutex at 4 threads is slower than mutex.
		w := eval[[]float64](b, `Array.from(document.querySelectorAll("section.group")[1].querySelectorAll("g.bar rect")).map(r => r.getBBox().width)`)
		if len(w) != 3 || !(w[1] > w[0]) {
			t.Errorf("bar widths %v: rwmutex should be longer than mutex", w)
		}
		b.shot("run-laptop")
		b.viewport(390, 844, true)
		b.open("/runs/" + run.ID)
		// On a phone the page must not scroll sideways (tables scroll
		// inside their own boxes).
		if over := eval[bool](b, `document.documentElement.scrollWidth > 391`); over {
			t.Errorf("run page is wider than a phone screen: %v > %v", eval[int](b, `document.documentElement.scrollWidth`), 390)
		}
		b.shot("run-phone")
		b.open(webtest.CaseURL(run, 4))
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		if over := eval[bool](b, `document.documentElement.scrollWidth > 391`); over {
			t.Errorf("case page is wider than a phone screen: %v > %v", eval[int](b, `document.documentElement.scrollWidth`), 390)
		}
		b.shot("case-phone")
		pair := run.ID + "/" + model.Slug(run.Cases[3].Name) + "&b=" + run.ID + "/" + model.Slug(run.Cases[4].Name)
		for _, path := range []string{"/", "/upload", "/runs/" + f.Small.ID, "/nope", "/compare?a=" + pair, "/runs/" + run.ID + "/compare?base=mutex"} {
			b.open(path)
			if w := eval[int](b, `document.documentElement.scrollWidth`); w > 391 {
				t.Errorf("%s is %dpx wide on a 390px phone", path, w)
			}
		}
		// The table scrolls inside its box, so the page's width does not
		// show a verdict pushed off-screen: every verdict must be on it
		// (issue 24: at 390 px the verdict column was to the right).
		if off := eval[int](b, `Array.from(document.querySelectorAll("table.compare .verdict")).filter(v => { const r = v.getBoundingClientRect(); return r.width === 0 || r.right > window.innerWidth; }).length`); off > 0 {
			t.Errorf("%d verdicts of the compare page are off a 390px screen", off)
		}
		b.shot("compare-phone")
		b.viewport(1280, 900, false)
		b.noConsoleErrors()
	})

	// The run table of the default cipher-cache run, at its widest, fits a
	// 1280 px window with its budget column (the README says so), and in
	// its stacked layout 1024 px: no sideways scrolling, of the page or of
	// a table's box; no figure, interval, name, warning sign or budget
	// label wrapped or outside its cell; the same column widths in every
	// group.
	t.Run("run table layout", func(t *testing.T) {
		b.t = t
		root := t.TempDir()
		wide := webtest.WriteWideRun(t, root)
		srv := httptest.NewServer(web.New(root, web.Options{Logf: t.Logf}))
		defer srv.Close()
		base := b.base
		b.base = srv.URL
		defer func() { b.base = base; b.viewport(1280, 900, false) }()
		for _, width := range []int64{1280, 1024} {
			b.viewport(width, 900, false)
			b.open("/runs/" + wide.ID)
			if n := eval[int](b, `document.querySelectorAll("table.results").length`); n != 4 {
				t.Fatalf("%d px: %d result tables, want 4", width, n)
			}
			for _, p := range eval[[]string](b, runTableProblems) {
				t.Errorf("%d px: %s", width, p)
			}
			b.shot(fmt.Sprintf("run-table-%d", width))
		}
		b.noConsoleErrors()
	})

	t.Run("flame", func(t *testing.T) {
		b.t = t
		c := &run.Cases[4] // rwmutex, keys=128, threads=4
		b.open("/runs/" + run.ID + "/cases/" + model.Slug(c.Name))
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		if h := eval[float64](b, `document.querySelector("#flame canvas").getBoundingClientRect().height`); h < 60 {
			t.Fatalf("flame canvas is %vpx high", h)
		}
		b.shot("case-flame")
		before := eval[string](b, `document.querySelector("#flame canvas").toDataURL()`)

		// Zoom: click main.worker, then hover the same row at the far
		// right: with the zoom, main.worker spans the whole width.
		at := b.findFrame("main.worker")
		b.do(chromedp.MouseClickXY(at.X, at.Y))
		right := eval[string](b, fmt.Sprintf(`(() => {
			const c = document.querySelector("#flame canvas"), r = c.getBoundingClientRect();
			c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.right - 3, clientY: %v, bubbles: true}));
			return document.querySelector("#flame .pf-details").textContent; })()`, at.Y))
		if !strings.HasPrefix(right, "main.worker — ") || !strings.Contains(right, "of zoom") {
			t.Errorf("after zooming into main.worker, the right edge of its row shows %q", right)
		}
		zoomed := eval[string](b, `document.querySelector("#flame canvas").toDataURL()`)
		if zoomed == before {
			t.Error("zooming did not change the canvas")
		}
		b.shot("case-flame-zoomed")
		b.do(chromedp.Evaluate[chromedp.Void](`Array.from(document.querySelectorAll("#flame .pf-btn")).find(b => b.textContent === "Reset zoom").click()`))

		// Focus: shift-click shows a function's callers and callees.
		at = b.findFrame("internal/sync.(*Mutex).lockSlow")
		b.do(chromedp.MouseClickXY(at.X, at.Y, chromedp.ButtonModifiers(chromedp.ModifierShift)))
		if d := eval[string](b, `document.querySelector("#flame .pf-details").textContent`); !strings.HasPrefix(d, "Focus on internal/sync.(*Mutex).lockSlow") {
			t.Errorf("after a shift-click, details say %q", d)
		}
		b.shot("case-flame-focus")
		b.do(chromedp.Evaluate[chromedp.Void](`Array.from(document.querySelectorAll("#flame .pf-btn")).find(b => b.textContent === "Exit focus").click()`))

		// Search: the share of the matched frames is shown.
		b.do(chromedp.SendKeys(`#flame .pf-search`, "blockSHANI"))
		b.waitFor(`document.querySelector("#flame .pf-match").textContent.startsWith("matched")`)
		match := eval[string](b, `document.querySelector("#flame .pf-match").textContent`)
		if want := "(38.10%)"; !strings.Contains(match, want) { // 40 of 105 samples
			t.Errorf("search shows %q, want the share %s", match, want)
		}
		b.shot("case-flame-search")
		b.do(chromedp.Evaluate[chromedp.Void](`(s => { s.value = ""; s.dispatchEvent(new Event("input")); })(document.querySelector("#flame .pf-search"))`))
		b.waitFor(`document.querySelector("#flame .pf-match").textContent === ""`)

		// Category highlight: toggling lock dims the other frames.
		plain := eval[string](b, `document.querySelector("#flame canvas").toDataURL()`)
		lock := `Array.from(document.querySelectorAll("#flame .pf-cat")).find(b => b.textContent.startsWith("lock"))`
		b.do(chromedp.Evaluate[chromedp.Void](lock + `.click()`))
		if p := eval[string](b, lock+`.getAttribute("aria-pressed")`); p != "true" {
			t.Errorf("lock toggle aria-pressed=%q after a click", p)
		}
		if eval[string](b, `document.querySelector("#flame canvas").toDataURL()`) == plain {
			t.Error("highlighting lock did not change the canvas")
		}
		b.shot("case-flame-lock")

		// Icicle: the graph turns upside down.
		b.do(chromedp.Evaluate[chromedp.Void](lock + `.click()`))
		upright := eval[string](b, `document.querySelector("#flame canvas").toDataURL()`)
		icicle := `Array.from(document.querySelectorAll("#flame .pf-btn")).find(b => b.textContent === "Icicle")`
		b.do(chromedp.Evaluate[chromedp.Void](icicle + `.click()`))
		if p := eval[string](b, icicle+`.getAttribute("aria-pressed")`); p != "true" {
			t.Errorf("Icicle aria-pressed=%q after a click", p)
		}
		if eval[string](b, `document.querySelector("#flame canvas").toDataURL()`) == upright {
			t.Error("the icicle view did not change the canvas")
		}
		b.do(chromedp.Evaluate[chromedp.Void](icicle + `.click()`))

		// Work patterns typed on the page classify as --work does: all
		// that runtime.goexit calls and nothing else decides becomes work.
		workShare := `parseFloat(Array.from(document.querySelectorAll("#flame .pf-cat")).find(b => b.textContent.startsWith("work")).textContent.slice(5))`
		workBefore := eval[float64](b, workShare)
		b.do(chromedp.SendKeys(`#flame .pf-work`, `^runtime\.goexit$`))
		b.waitFor(workShare + ` > ` + fmt.Sprint(workBefore))
		b.shot("case-flame-work")
		b.do(chromedp.Evaluate[chromedp.Void](`(s => { s.value = ""; s.dispatchEvent(new Event("input")); })(document.querySelector("#flame .pf-work"))`))
		b.waitFor(workShare + ` === ` + fmt.Sprint(workBefore))

		// The other profile kinds load too.
		b.open("/runs/" + run.ID + "/cases/" + model.Slug(c.Name) + "?kind=mutex")
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		if sub := eval[string](b, `document.querySelector("#flame .pf-sub").textContent`); !strings.HasPrefix(sub, "delay") {
			t.Errorf("mutex flame graph subtitle %q", sub)
		}
		b.noConsoleErrors()
	})

	t.Run("hostile names", func(t *testing.T) {
		b.t = t
		b.open("/runs/" + f.Small.ID)
		if n := eval[int](b, `document.querySelectorAll("img").length`); n != 0 {
			t.Errorf("a hostile variant name became %d <img> elements", n)
		}
		if !eval[bool](b, `document.body.textContent.includes('<img src=x onerror="alert(1)">')`) {
			t.Error("the hostile name is not shown as text")
		}
		b.open(webtest.CaseURL(f.Small, 1))
		if n := eval[int](b, `document.querySelectorAll("main img:not([alt])").length`); n != 0 {
			t.Errorf("a hostile function name became %d <img> elements", n)
		}
		b.shot("hostile-case")
		b.noConsoleErrors()
	})

	t.Run("compare", func(t *testing.T) {
		b.t = t
		b.open("/runs/" + run.ID)
		// Pick mutex vs rwmutex at 4 threads in the run page's form.
		a := run.ID + "/" + model.Slug(run.Cases[3].Name)
		bb := run.ID + "/" + model.Slug(run.Cases[4].Name)
		b.do(chromedp.SetValue(`form.compare-form select[name="a"]`, a),
			chromedp.SetValue(`form.compare-form select[name="b"]`, bb),
			chromedp.Click(`form.compare-form button`))
		b.waitFor(`location.pathname === "/compare" && document.readyState === "complete" && !!document.querySelector("table.compare")`)
		if got := eval[string](b, `new URLSearchParams(location.search).get("b")`); got != bb {
			t.Errorf("compare URL has b=%q, want %q", got, bb)
		}
		verdict := eval[string](b, `document.querySelector("table.compare tbody tr .verdict").textContent`)
		if verdict != "worse" {
			t.Errorf("time/op verdict %q, want \"worse\" (rwmutex is slower in the fixture)", verdict)
		}
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		if sub := eval[string](b, `document.querySelector("#flame .pf-sub").textContent`); !strings.Contains(sub, "diff against a base") {
			t.Errorf("differential flame graph subtitle %q", sub)
		}
		// The union's key, and a frame's change with its interval.
		if key := eval[string](b, `document.querySelector("#flame .pf-key").textContent`); !strings.Contains(key, "grey: within noise") {
			t.Errorf("differential flame graph key %q", key)
		}
		b.findFrame("main.worker")
		if d := eval[string](b, `document.querySelector("#flame .pf-details").textContent`); !strings.Contains(d, "(95%)") || !strings.Contains(d, "base ") {
			t.Errorf("diff frame details %q lack the change's interval", d)
		}
		b.shot("compare")
		b.open("/compare?a=" + a + "&b=" + bb + "&kind=cpu&layout=base")
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		if sub := eval[string](b, `document.querySelector("#flame .pf-sub").textContent`); !strings.Contains(sub, "on the base profile") {
			t.Errorf("base-layout subtitle %q", sub)
		}
		b.shot("compare-base")
		b.noConsoleErrors()
	})

	t.Run("upload", func(t *testing.T) {
		b.t = t
		file := filepath.Join(t.TempDir(), "cpu.pb.gz")
		if err := os.WriteFile(file, webtest.Profile(t, "cpu", 2), 0o644); err != nil {
			t.Fatal(err)
		}
		b.open("/upload")
		b.shot("upload-form")
		b.do(chromedp.SetUploadFiles("#file", []string{file}),
			chromedp.Click(`#upload button[type="submit"]`))
		b.waitFor(`location.pathname.startsWith("/upload/") && document.readyState === "complete" && !!document.querySelector("table.top")`)
		if h := eval[string](b, `document.querySelector("h1").textContent`); h != "cpu.pb.gz" {
			t.Errorf("upload page title %q", h)
		}
		if n := eval[int](b, `document.querySelectorAll("table.budget tr").length`); n < 3 {
			t.Errorf("upload shows %d categories, want several", n)
		}
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		b.shot("upload-view")
		// Nothing was stored.
		if runs, _, _ := store.Open(f.Root).List(); len(runs) != 3 {
			t.Errorf("viewing an upload stored it: %d runs", len(runs))
		}

		// Drag and drop: a file dropped on the zone is opened the same way.
		b.open("/upload")
		data := base64.StdEncoding.EncodeToString(webtest.Profile(t, "wall", 0))
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const bytes = Uint8Array.from(atob(%q), c => c.charCodeAt(0));
			const dt = new DataTransfer();
			dt.items.add(new File([bytes], "dropped.pb.gz"));
			document.getElementById("drop").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		})()`, data)))
		b.waitFor(`location.pathname.startsWith("/upload/") && document.readyState === "complete" && !!document.querySelector("h1")`)
		if h := eval[string](b, `document.querySelector("h1").textContent`); h != "dropped.pb.gz" {
			t.Errorf("dropped upload page title %q", h)
		}
		b.noConsoleErrors()
	})
	// A recursive stack 10,000 frames deep would need a canvas 180,000 px
	// high, which browsers refuse (they draw nothing): the viewer shows the
	// rows a canvas can hold, from the zoomed frame, and says so.
	t.Run("deep stack", func(t *testing.T) {
		b.t = t
		file := filepath.Join(t.TempDir(), "deep.pb.gz")
		if err := os.WriteFile(file, webtest.DeepProfile(t, 10000), 0o644); err != nil {
			t.Fatal(err)
		}
		b.open("/upload")
		b.do(chromedp.SetUploadFiles("#file", []string{file}),
			chromedp.Click(`#upload button[type="submit"]`))
		b.waitFor(`location.pathname.startsWith("/upload/") && document.readyState === "complete" && !!document.getElementById("flame")`)
		b.waitFor(`document.getElementById("flame").dataset.state === "ready"`)
		h := eval[int](b, `document.querySelector("#flame canvas").height`)
		if h < 1000 || h > 32767 {
			t.Errorf("canvas for a 10,000-frame stack is %d device px high; want between 1000 and 32767", h)
		}
		if note := eval[string](b, `Array.from(document.querySelectorAll("#flame .pf-sub")).map(e => e.hidden ? "" : e.textContent).join("|")`); !strings.Contains(note, "deeper than the") {
			t.Errorf("no note that the graph is cut: %q", note)
		}
		// Zooming into a frame near the top shows the frames above it.
		top := eval[string](b, `(() => {
			const c = document.querySelector("#flame canvas"), r = c.getBoundingClientRect();
			c.dispatchEvent(new MouseEvent("click", {clientX: r.left + 5, clientY: r.top + 5, bubbles: true}));
			c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + 5, clientY: r.top + 5, bubbles: true}));
			return document.querySelector("#flame .pf-details").textContent; })()`)
		if !strings.HasPrefix(top, "main.recurse — ") {
			t.Errorf("after zooming near the top, the top row shows %q", top)
		}
		b.noConsoleErrors()
	})
}

// runTableProblems lists what does not fit on a run page: the page or a
// table wider than its box, a cell's content outside the cell, a piece of
// text that wrapped, or column widths that differ between the groups.
const runTableProblems = `(() => {
	const out = [];
	const page = document.documentElement.scrollWidth;
	if (page > innerWidth) out.push("the page is " + page + " px wide in a " + innerWidth + " px window");
	const widths = [];
	document.querySelectorAll("table.results").forEach((t, ti) => {
		const box = t.parentElement;
		if (box.scrollWidth > box.clientWidth) out.push("table " + ti + " is " + box.scrollWidth + " px wide in a " + box.clientWidth + " px box");
		const boxR = box.getBoundingClientRect();
		widths.push(Array.from(t.rows[0].cells).map(c => Math.round(c.getBoundingClientRect().width)).join(","));
		t.querySelectorAll("td").forEach(td => {
			const cell = td.getBoundingClientRect();
			const range = document.createRange();
			range.selectNodeContents(td);
			const over = Array.from(range.getClientRects()).some(r => r.width > 0 &&
				(r.left < cell.left - 0.5 || r.right > cell.right + 0.5 || r.right > boxR.right + 0.5));
			if (over) out.push("table " + ti + ": " + JSON.stringify(td.textContent.trim().slice(0, 40)) + " is not inside its cell");
		});
		// Each piece of text is one line; a name and its warning sign share it.
		t.querySelectorAll(".v, .err, .budget-text, .kinds, td.variant .name a, .warning").forEach(e => {
			if (e.getClientRects().length > 1) out.push("table " + ti + ": " + JSON.stringify(e.textContent) + " wraps");
		});
		t.querySelectorAll("td.variant .name").forEach(n => {
			const a = n.querySelector("a"), w = n.querySelector(".warning");
			if (w && Math.abs(a.getBoundingClientRect().top - w.getBoundingClientRect().top) > 2)
				out.push("table " + ti + ": the warning sign of " + a.textContent + " is on a line of its own");
		});
	});
	if (new Set(widths).size > 1) out.push("column widths differ between groups: " + widths.join(" | "));
	return out;
})()`
