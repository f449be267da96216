package store

import (
	"github.com/perflab/perflab/internal/model"
	"github.com/perflab/perflab/profiles"
)

// The data model moved to internal/model (issue 24: the model apart from
// persistence). The names below are aliases of it, kept for the transition
// only: no package of this module uses them any more (4d87462 switched
// them all); they let branches in flight compile unchanged. New code
// imports internal/model. Every alias
// is marked for go fix's inliner: `go fix -inline ./...` rewrites a
// package's uses of them to internal/model's names (ErrNoCase and
// ProfileKinds, variables, it cannot: rename those by hand); then this
// file goes.

// Types of run.json.
//
//go:fix inline
type (
	Run            = model.Run
	Env            = model.Env
	Config         = model.Config
	Classification = model.Classification
	Rule           = model.Rule
	Status         = model.Status
	Case           = model.Case
	Rep            = model.Rep
	Stat           = model.Stat
	Duration       = model.Duration
	Round          = model.Round
	Trust          = model.Trust
	TrustReason    = model.TrustReason
	TrustKind      = model.TrustKind
	Window         = model.Window
	TracedRep      = model.TracedRep
	Warning        = model.Warning
	WarningKind    = model.WarningKind
)

// Bounds on a stored classification (model.MaxClassificationRules…).
//
//go:fix inline
const (
	MaxClassificationRules = model.MaxClassificationRules
	MaxPatternBytes        = model.MaxPatternBytes
	MaxClassificationBytes = model.MaxClassificationBytes
	MaxCompiledBytes       = model.MaxCompiledBytes
)

// Case status values (model.StatusOK…).
//
//go:fix inline
const (
	StatusOK            = model.StatusOK
	StatusFailed        = model.StatusFailed
	StatusSkipped       = model.StatusSkipped
	StatusNotApplicable = model.StatusNotApplicable
)

// The reasons a budget cannot be trusted (model.TracedOff…).
//
//go:fix inline
const (
	TracedOff      = model.TracedOff
	TracerEffect   = model.TracerEffect
	FewSamples     = model.FewSamples
	RecordsLost    = model.RecordsLost
	SharedHelpers  = model.SharedHelpers
	HelpersCharged = model.HelpersCharged
)

// The kinds of case warnings (model.WarnFewReps…).
//
//go:fix inline
const (
	WarnFewReps         = model.WarnFewReps
	WarnWideCI          = model.WarnWideCI
	WarnTwoSpeeds       = model.WarnTwoSpeeds
	WarnUntil           = model.WarnUntil
	WarnInterrupted     = model.WarnInterrupted
	WarnAbandoned       = model.WarnAbandoned
	WarnProfiling       = model.WarnProfiling
	WarnWindowDrift     = model.WarnWindowDrift
	WarnWindowGC        = model.WarnWindowGC
	WarnOccupancy       = model.WarnOccupancy
	WarnStarved         = model.WarnStarved
	WarnWindowContended = model.WarnWindowContended
	WarnWindowSteal     = model.WarnWindowSteal
	WarnFewSamples      = model.WarnFewSamples
	WarnUntimed         = model.WarnUntimed
	WarnOther           = model.WarnOther
)

// ErrNoCase is model.ErrNoCase, the same error value: errors.Is matches
// either name.
var ErrNoCase = model.ErrNoCase

// ProfileKinds is model.ProfileKinds, the same slice.
var ProfileKinds = model.ProfileKinds

// Slug is model.Slug.
//
//go:fix inline
func Slug(name string) string { return model.Slug(name) }

// InterruptedNote is model.InterruptedNote.
//
//go:fix inline
func InterruptedNote(by, where string) string { return model.InterruptedNote(by, where) }

// Warn is model.Warn.
//
//go:fix inline
func Warn(kind model.WarningKind, figure float64, message string) model.Warning {
	return model.Warn(kind, figure, message)
}

// NewClassification is model.NewClassification.
//
//go:fix inline
func NewClassification(work []string, user []profiles.Rule) *model.Classification {
	return model.NewClassification(work, user)
}

// SortNewestFirst is model.SortNewestFirst.
//
//go:fix inline
func SortNewestFirst(runs []*model.Run) { model.SortNewestFirst(runs) }

// LatestOf is model.LatestOf.
//
//go:fix inline
func LatestOf(runs []*model.Run) *model.Run { return model.LatestOf(runs) }
