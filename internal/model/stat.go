package model

import (
	"encoding/json"
	"math"
	"time"
)

// Stat summarises one metric over a case's repetitions.
type Stat struct {
	N        int     `json:"n"`
	Mean     float64 `json:"mean"`
	MeanLo   float64 `json:"mean_lo"` // 99.9% confidence interval of the mean
	MeanHi   float64 `json:"mean_hi"`
	Median   float64 `json:"median"`
	MedianLo float64 `json:"median_lo"` // 95% confidence interval of the median
	MedianHi float64 `json:"median_hi"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
}

// HalfWidth is the median's 95% confidence interval as a fraction of the
// median: the larger distance from the median to either bound; +Inf when
// there were too few repetitions for an interval (or it is not a number).
// Every renderer and the runner's warnings use this one definition.
func (s Stat) HalfWidth() float64 {
	if s.Median == 0 {
		return 0
	}
	if math.IsInf(s.MedianLo, 0) || math.IsInf(s.MedianHi, 0) || math.IsNaN(s.MedianLo) || math.IsNaN(s.MedianHi) {
		return math.Inf(1)
	}
	return math.Max(s.MedianHi/s.Median-1, 1-s.MedianLo/s.Median)
}

// Duration is a time.Duration that reads and writes as "1.5s" in JSON.
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// statJSON is Stat on the wire. JSON has no infinities, and benchmath
// reports an interval it cannot compute (too few samples) as ±Inf: such a
// bound is written as null and read back as ±Inf.
type statJSON struct {
	N        int      `json:"n"`
	Mean     float64  `json:"mean"`
	MeanLo   *float64 `json:"mean_lo"`
	MeanHi   *float64 `json:"mean_hi"`
	Median   float64  `json:"median"`
	MedianLo *float64 `json:"median_lo"`
	MedianHi *float64 `json:"median_hi"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func orInf(p *float64, sign int) float64 {
	if p == nil {
		return math.Inf(sign)
	}
	return *p
}

// MarshalJSON writes s, with unknown interval bounds as null.
func (s Stat) MarshalJSON() ([]byte, error) {
	return json.Marshal(statJSON{s.N, s.Mean, finite(s.MeanLo), finite(s.MeanHi), s.Median,
		finite(s.MedianLo), finite(s.MedianHi), s.Min, s.Max})
}

// UnmarshalJSON reads s; null bounds become -Inf and +Inf.
func (s *Stat) UnmarshalJSON(b []byte) error {
	var j statJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Stat{j.N, j.Mean, orInf(j.MeanLo, -1), orInf(j.MeanHi, 1), j.Median,
		orInf(j.MedianLo, -1), orInf(j.MedianHi, 1), j.Min, j.Max}
	return nil
}
