package compare

import "github.com/perflab/perflab/internal/model"

// Pairing is the cases two sides share, and what kept others from a pair:
// what a gate needs besides the rows, since a case that was not compared
// is not a pass (issue 26).
type Pairing struct {
	Pairs []Pair
	// OnlyA and OnlyB are the cases one side has and the other lacks, in
	// their run's order. Across runs a case only in A (the base) went
	// missing from the new run; one only in B is new.
	OnlyA, OnlyB []string
	// Unmatched names the cases that needed a counterpart and had none,
	// in words: with --base, a variant at parameters the base variant was
	// not measured at.
	Unmatched []string
	// Duplicates names the case names (or, with --base, the base cases'
	// parameters) that occur more than once on a side: which of them a
	// row compares would be arbitrary.
	Duplicates []string
	// Involved are all the cases the comparison rests on, each once:
	// a gate judges their status even when they are in no pair.
	Involved []RunCase
}

// RunCase is a case and the id of the run it is in.
type RunCase struct {
	Run  string
	Case *model.Case
}

// PairRuns pairs the cases of runs a and b by name, in a's order, with an
// index by name: linear in cases. (A search of b per case of a made
// 2,000/8,000/30,000 cases take 0.9/10/139 s; issue 26.) paired says a
// and b are the same run, whose repetitions pair by round.
func PairRuns(a, b *model.Run, paired bool) Pairing {
	var p Pairing
	ia, da := index(a)
	ib, db := index(b)
	p.Duplicates = append(da, db...)
	if paired {
		p.Duplicates = da
	}
	for i := range a.Cases {
		ca := &a.Cases[i]
		if ia[ca.Name] != ca {
			continue // a duplicate: said once, in Duplicates
		}
		if cb, ok := ib[ca.Name]; ok {
			p.Pairs = append(p.Pairs, Pair{Label: ca.Name, A: ca, B: cb, Paired: paired})
		} else {
			p.OnlyA = append(p.OnlyA, ca.Name)
		}
	}
	for i := range b.Cases {
		cb := &b.Cases[i]
		if ib[cb.Name] != cb {
			continue
		}
		if _, ok := ia[cb.Name]; !ok {
			p.OnlyB = append(p.OnlyB, cb.Name)
		}
	}
	p.Involved = involved(a, b)
	return p
}

// index maps each case name of r to its first case, and lists the names
// that occur more than once, each once.
func index(r *model.Run) (map[string]*model.Case, []string) {
	m := make(map[string]*model.Case, len(r.Cases))
	var dups []string
	seen := map[string]bool{}
	for i := range r.Cases {
		c := &r.Cases[i]
		if _, ok := m[c.Name]; !ok {
			m[c.Name] = c
		} else if !seen[c.Name] {
			seen[c.Name] = true
			dups = append(dups, "case "+c.Name+" of run "+r.ID)
		}
	}
	return m, dups
}

// involved lists the cases of runs, each once (a and b may be one run).
func involved(runs ...*model.Run) []RunCase {
	var out []RunCase
	for j, r := range runs {
		if j > 0 && r == runs[0] {
			break
		}
		for i := range r.Cases {
			out = append(out, RunCase{r.ID, &r.Cases[i]})
		}
	}
	return out
}

// PairVariants pairs every case of run with the base variant's case of
// the same group (key: its parameters and goroutine count), in run's
// order. The repetitions pair by round: the runner ran every case once
// per round. A group the base variant has twice is a duplicate; a case
// whose group has no base case is unmatched.
func PairVariants(run *model.Run, base string, key func(*model.Case) string) Pairing {
	var p Pairing
	_, p.Duplicates = index(run)
	bases := map[string]*model.Case{}
	seen := map[string]bool{}
	for i := range run.Cases {
		c := &run.Cases[i]
		if c.Variant != base {
			continue
		}
		k := key(c)
		if _, ok := bases[k]; !ok {
			bases[k] = c
		} else if !seen[k] {
			seen[k] = true
			p.Duplicates = append(p.Duplicates, "variant "+base+" at "+k+" in run "+run.ID)
		}
	}
	for i := range run.Cases {
		c := &run.Cases[i]
		if c.Variant == base {
			continue
		}
		k := key(c)
		if b, ok := bases[k]; ok {
			p.Pairs = append(p.Pairs, Pair{Label: k + "  " + c.Variant, A: b, B: c, Paired: true})
		} else {
			p.Unmatched = append(p.Unmatched, c.Name+" (no "+base+" case at "+k+")")
		}
	}
	p.Involved = involved(run)
	return p
}
