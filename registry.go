package perflab

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/suggest"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]*Scenario{}
)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Register makes a scenario available by name. It is meant to be called from
// an init function. It panics on a programming error: a nil or invalid
// scenario, or a name registered twice.
func Register(s *Scenario) {
	if s == nil {
		panic("perflab: Register scenario is nil")
	}
	if err := s.check(); err != nil {
		panic("perflab: Register: " + err.Error())
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[s.Name]; dup {
		panic("perflab: Register called twice for scenario " + s.Name)
	}
	registry[s.Name] = s
}

// Lookup returns the registered scenario with the given name.
func Lookup(name string) (*Scenario, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[name]
	if !ok {
		names := make([]string, 0, len(registry))
		for n := range registry {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, suggest.UnknownScenario(name, names, "perflab list")
	}
	return s, nil
}

// Scenarios returns the registered scenarios sorted by name.
func Scenarios() []*Scenario {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]*Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Variant returns the variant with the given name.
func (s *Scenario) Variant(name string) (*Variant, error) {
	for i := range s.Variants {
		if s.Variants[i].Name == name {
			return &s.Variants[i], nil
		}
	}
	names := make([]string, len(s.Variants))
	for i, v := range s.Variants {
		names[i] = v.Name
	}
	return nil, fmt.Errorf("scenario %s has no variant %q%s (variants: %s)", s.Name, name, orSuggest(name, names), strings.Join(names, ", "))
}

// Param returns the parameter with the given name.
func (s *Scenario) Param(name string) (*Param, error) {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i], nil
		}
	}
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	names = append(names, "threads")
	return nil, fmt.Errorf("scenario %s has no parameter %q%s (parameters: %s)", s.Name, name, orSuggest(name, names), strings.Join(names, ", "))
}

// orSuggest is ": did you mean X?" for an error about name, or "" when
// none of names is close to it.
func orSuggest(name string, names []string) string {
	if dym := suggest.DidYouMean(name, names); dym != "" {
		return ": " + dym
	}
	return ""
}

// DefaultThreads returns the goroutine counts used when the user does not
// choose.
func (s *Scenario) DefaultThreads() []int {
	if len(s.Threads) == 0 {
		return []int{1}
	}
	return append([]int(nil), s.Threads...)
}

func (s *Scenario) check() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("scenario name %q must be lower-case letters, digits and dashes", s.Name)
	}
	if len(s.Variants) == 0 {
		return fmt.Errorf("scenario %s has no variants", s.Name)
	}
	seen := map[string]bool{"variant": true, "threads": true}
	for _, p := range s.Params {
		if !nameRE.MatchString(p.Name) || seen[p.Name] {
			return fmt.Errorf("scenario %s: parameter name %q is invalid, reserved or repeated", s.Name, p.Name)
		}
		seen[p.Name] = true
		if len(p.Default) == 0 {
			return fmt.Errorf("scenario %s: parameter %s has no default", s.Name, p.Name)
		}
		switch {
		case (p.Min != 0 || p.Max != 0) && p.Kind != IntParam:
			return fmt.Errorf("scenario %s: parameter %s has Min or Max but is not an IntParam", s.Name, p.Name)
		case p.Min != 0 && p.Max <= 0:
			return fmt.Errorf("scenario %s: parameter %s has Min %d but no Max: a range needs both", s.Name, p.Name, p.Min)
		case p.Max > 0 && (p.Min < 0 || p.Min > p.Max):
			return fmt.Errorf("scenario %s: parameter %s: Min %d and Max %d are no range (0 <= Min <= Max)", s.Name, p.Name, p.Min, p.Max)
		}
		for _, v := range p.Default {
			if err := p.Validate(v); err != nil {
				return fmt.Errorf("scenario %s: default: %v", s.Name, err)
			}
		}
	}
	vseen := map[string]bool{}
	for _, v := range s.Variants {
		if !nameRE.MatchString(v.Name) || vseen[v.Name] {
			return fmt.Errorf("scenario %s: variant name %q is invalid or repeated", s.Name, v.Name)
		}
		vseen[v.Name] = true
		if v.New == nil {
			return fmt.Errorf("scenario %s: variant %s has no New", s.Name, v.Name)
		}
	}
	for _, t := range s.Threads {
		if t < 1 {
			return fmt.Errorf("scenario %s: thread count %d < 1", s.Name, t)
		}
	}
	for _, w := range s.Work {
		if _, err := regexp.Compile(w); err != nil {
			return fmt.Errorf("scenario %s: work pattern: %v", s.Name, err)
		}
	}
	return nil
}
