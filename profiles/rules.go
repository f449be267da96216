package profiles

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Rule is one classification rule: frames whose function name matches
// Pattern (an RE2 regular expression, unanchored unless it says ^ or $)
// belong to Category.
//
// Classification walks a stack from the leaf towards the root and the
// leaf-most frame matched by a normal rule decides; frames no rule matches
// are passed over, so a memmove under crypto/sha256 is work and the same
// memmove under mallocgc is alloc. A Fallback rule decides only when no
// frame of the stack is matched by a normal rule: runtime.lock2 is gc under
// the sweeper, sched under findRunnable, and lock only when nothing above it
// says otherwise.
type Rule struct {
	Category Category
	Pattern  string
	Fallback bool
}

type rule struct {
	Rule
	re *regexp.Regexp
	// lit is a literal every match contains (at the start if anchored): a
	// cheap filter that spares most names the regexp machine.
	lit      string
	anchored bool
}

func compileRule(r Rule) (rule, error) {
	if !r.Category.Valid() {
		return rule{}, fmt.Errorf("unknown category %q (want one of work, lock, wait, alloc, gc, sched, other)", r.Category)
	}
	re, err := regexp.Compile(r.Pattern)
	if err != nil {
		return rule{}, fmt.Errorf("bad pattern %q: %v", r.Pattern, err)
	}
	lit, _ := re.LiteralPrefix()
	return rule{Rule: r, re: re, lit: lit, anchored: strings.HasPrefix(r.Pattern, "^")}, nil
}

func (r *rule) match(name string) bool {
	if r.anchored {
		if !strings.HasPrefix(name, r.lit) {
			return false
		}
	} else if r.lit != "" && !strings.Contains(name, r.lit) {
		return false
	}
	return r.re.MatchString(name)
}

// Rules is an ordered set of classification rules: user rules first, then
// the scenario's work patterns, then the built-in rules. The first rule
// matching a frame's name gives that frame's class. Rules is safe for
// concurrent use and caches the class of every name it has seen.
type Rules struct {
	user, work, base []rule
	all              []rule   // user, work, base: the order of consultation
	cache            sync.Map // function name → Class
	cached           atomic.Int64
	// charge, if set (ChargeCache), is asked before the cache keeps a
	// name.
	charge func(bytes int64) bool
}

// CacheEntryBytes is what the name cache takes per name besides the name
// itself: sync.Map's entry and the boxed Class.
const CacheEntryBytes = 128

// ChargeCache makes r ask charge, before its cache keeps a name, for the
// bytes that keeps (CacheEntryBytes plus the name's length: the cache
// keeps the name's string alive after the profile it came from is gone).
// A name charge refuses is classified, and not kept. It is for a server
// that keeps Rules and counts what it holds (package web's memory budget,
// issue 26); call it before r is used.
func (r *Rules) ChargeCache(charge func(bytes int64) bool) { r.charge = charge }

// maxCached bounds the name cache of one Rules: a long-running server that
// classifies many users' profiles must not grow without limit. 256k names
// is more than the largest profiles we have seen hold (100k stacks of a
// 4,000-function program).
const maxCached = 1 << 18

func newRules(user, work, base []rule) *Rules {
	r := &Rules{user: user, work: work, base: base}
	r.all = make([]rule, 0, len(user)+len(work)+len(base))
	r.all = append(append(append(r.all, user...), work...), base...)
	return r
}

// Class is what the rules say about one frame, or about a stack once frames
// are combined with Under: its deciding category, if any, and its fallback
// category, if any. The zero Class says nothing (unclassified, Other).
type Class struct {
	dec, fb uint8 // 1 + index in Categories; 0 = none
}

// Under returns the class of a stack made of frame (or stack) c called
// beneath the stack of class caller: the leaf-most decision wins, and
// failing that the leaf-most fallback. Building a flame tree from the root,
// a node's class is r.Frame(name).Under(parentClass).
func (c Class) Under(caller Class) Class {
	if c.dec == 0 {
		c.dec = caller.dec
	}
	if c.fb == 0 {
		c.fb = caller.fb
	}
	return c
}

// Decided reports whether a normal (not fallback) rule matched, so that
// frames nearer the root cannot change the outcome.
func (c Class) Decided() bool { return c.dec != 0 }

// Category returns the category of a stack of this class: its decision, else
// its fallback, else Other.
func (c Class) Category() Category {
	switch {
	case c.dec != 0:
		return Categories[c.dec-1]
	case c.fb != 0:
		return Categories[c.fb-1]
	}
	return Other
}

// Frame returns the class of one frame, by function name.
func (r *Rules) Frame(name string) Class {
	if v, ok := r.cache.Load(name); ok {
		return v.(Class)
	}
	var c Class
	for i := range r.all {
		ru := &r.all[i]
		if ru.match(name) {
			idx := uint8(ru.Category.Index() + 1)
			if ru.Fallback {
				c.fb = idx
			} else {
				c.dec = idx
			}
			break
		}
	}
	if r.cached.Load() < maxCached && (r.charge == nil || r.charge(CacheEntryBytes+int64(len(name)))) {
		r.cache.Store(name, c)
		r.cached.Add(1)
	}
	return c
}

// Classify returns the category of a stack of function names, leaf first
// (the order of pprof's Sample.Location and of fgprof's stacks).
func (r *Rules) Classify(stack []string) Category {
	var c Class
	for _, name := range stack {
		// Walking from the leaf, each frame is the caller of what came before.
		if c = c.Under(r.Frame(name)); c.Decided() {
			break
		}
	}
	return c.Category()
}

// List returns a copy of the rules in the order they are consulted.
func (r *Rules) List() []Rule {
	out := make([]Rule, len(r.all))
	for i, ru := range r.all {
		out[i] = ru.Rule
	}
	return out
}

// WithWork returns rules that also classify frames matching any of patterns
// (RE2, as in perflab.Scenario.Work) as Work. The work rules are consulted
// after r's user rules and before the built-in ones, so a scenario whose
// work is runtime.memmove can say so. r itself is unchanged.
func (r *Rules) WithWork(patterns ...string) (*Rules, error) {
	work := append([]rule(nil), r.work...)
	for _, p := range patterns {
		ru, err := compileRule(Rule{Category: Work, Pattern: p})
		if err != nil {
			return nil, fmt.Errorf("work pattern: %v", err)
		}
		work = append(work, ru)
	}
	return newRules(r.user, work, r.base), nil
}

// User returns a copy of r's user rules (from a rules file, or WithUser),
// in the order they are consulted. With the work patterns, they are what a
// stored run records so that another binary, with the same built-in rules,
// can rebuild r: DefaultRules().WithUser(user...).WithWork(work...).
func (r *Rules) User() []Rule {
	out := make([]Rule, len(r.user))
	for i, ru := range r.user {
		out[i] = ru.Rule
	}
	return out
}

// WithUser returns rules that consult rules after r's own user rules and
// before its work patterns and built-in rules, as if they ended r's rules
// file. It fails, naming the rule, on an unknown category or a pattern
// that does not compile. r itself is unchanged.
func (r *Rules) WithUser(rules ...Rule) (*Rules, error) {
	user := append([]rule(nil), r.user...)
	for i, ru := range rules {
		c, err := compileRule(ru)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %v", i+1, err)
		}
		user = append(user, c)
	}
	return newRules(user, r.work, r.base), nil
}

// Bounds on a rules file, the same as a stored run's
// (model.MaxClassificationRules, MaxPatternBytes, MaxClassificationBytes),
// which records the rules that classified it.
const (
	MaxUserRules   = 256
	MaxRulePattern = 4 << 10
	MaxRulesBytes  = 64 << 10
)

// DefaultRules returns the built-in rules for Go 1.26 frame names, with no
// work patterns: until a scenario's work is added with WithWork, the
// program's own code is Other.
func DefaultRules() *Rules {
	return newRules(nil, nil, builtin())
}

// LoadRules reads user rules from a file (see ParseRules for the format)
// and returns them followed by the built-in rules.
func LoadRules(path string) (*Rules, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseRules(f, path)
}

// ParseRules reads user rules and returns them followed by the built-in
// rules. name is used in error messages ("name:line: ...").
//
// The format is one rule a line: a category, white space, and an RE2
// regular expression matched against full function names (the rest of the
// line, trimmed). A category followed by "?" makes a fallback rule (see
// Rule). Blank lines and lines starting with # are ignored. For example:
//
//	# our spin lock is a lock, our codec is the work
//	lock   ^example\.com/spin\.\(\*Lock\)\.
//	work   ^example\.com/codec\.
//	other? ^cgocall$
//
// A file holds at most MaxUserRules rules of at most MaxRulePattern bytes
// each, MaxRulesBytes in all: what a run can record of them
// (model.Classification.Check). They are counted while reading, so a
// longer file fails at its first rule too many, not after compiling all
// of it (issue 26: a 1,000,000-line file compiled for 9 s in 3.1 GB before
// the count was checked).
func ParseRules(rd io.Reader, name string) (*Rules, error) {
	var user []rule
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line, total := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if len(user) == MaxUserRules {
			return nil, fmt.Errorf("%s:%d: more than %d rules (at most %d: a run records them all)", name, line, MaxUserRules, MaxUserRules)
		}

		cat, pat, ok := strings.Cut(text, " ")
		if !ok {
			cat, pat, ok = strings.Cut(text, "\t")
		}
		pat = strings.TrimSpace(pat)
		if !ok || pat == "" {
			return nil, fmt.Errorf("%s:%d: want \"category regexp\", got %q", name, line, text)
		}
		if len(pat) > MaxRulePattern {
			return nil, fmt.Errorf("%s:%d: the pattern is %d bytes long (at most %d)", name, line, len(pat), MaxRulePattern)
		}
		if total += len(pat); total > MaxRulesBytes {
			return nil, fmt.Errorf("%s:%d: the patterns are over %d bytes in all", name, line, MaxRulesBytes)
		}
		fallback := strings.HasSuffix(cat, "?")
		ru, err := compileRule(Rule{Category: Category(strings.TrimSuffix(cat, "?")), Pattern: pat, Fallback: fallback})
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		user = append(user, ru)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return newRules(user, nil, builtin()), nil
}
