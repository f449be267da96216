package pyroscope

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// Limits are the checks a Pyroscope server's distributor makes on every
// profile it is sent (pkg/validation, Pyroscope v1.12). Push checks them
// before sending, so a profile the server would refuse fails with an error
// that names the label or the size at fault, not with a 400 (or, for the
// ingestion burst, a 429 that no retry can pass) after the upload.
type Limits struct {
	// MaxLabelNameLength and MaxLabelValueLength bound every series
	// label, sample labels included (the server turns those into series
	// labels): -validation.max-length-label-name, -…-label-value.
	MaxLabelNameLength  int
	MaxLabelValueLength int
	// MaxLabelNamesPerSeries counts the labels of one series: those of the
	// request, the four the server adds (__name__, __delta__,
	// service_name, pyroscope_spy) and a sample's own labels
	// (-validation.max-label-names-per-series).
	MaxLabelNamesPerSeries int
	// MaxProfileSizeBytes bounds the profile's uncompressed protobuf
	// (-validation.max-profile-size-bytes).
	MaxProfileSizeBytes int
	// MaxProfileSamples bounds the samples of one profile
	// (-validation.max-profile-stacktrace-samples).
	MaxProfileSamples int
	// MaxSampleLabels bounds the labels of one sample
	// (-validation.max-profile-stacktrace-sample-labels).
	MaxSampleLabels int
	// IngestionBurstBytes is the rate limiter's burst: a request whose
	// uncompressed size (profile and labels) is larger is refused, with 429,
	// however long one waits (-distributor.ingestion-burst-size-mb).
	IngestionBurstBytes int
}

// DefaultLimits are the server's defaults (Pyroscope v1.12.0,
// pkg/validation/limits.go). Zero fields are not checked.
var DefaultLimits = Limits{
	MaxLabelNameLength:     1024,
	MaxLabelValueLength:    2048,
	MaxLabelNamesPerSeries: 30,
	MaxProfileSizeBytes:    4 << 20,
	MaxProfileSamples:      16000,
	MaxSampleLabels:        100,
	IngestionBurstBytes:    2 << 20,
}

// serverAddedLabels are the series labels the server's /ingest adds to
// those of the name parameter (pkg/og/convert/pprof createLabels).
var serverAddedLabels = []string{"__name__", "__delta__", "service_name", "pyroscope_spy"}

// LimitError is a profile or label that a server with the given limits
// would refuse.
type LimitError struct {
	// Label is the label at fault, if it is one.
	Label string
	// What says what is over which limit and how to fix it.
	What string
}

func (e *LimitError) Error() string {
	if e.Label != "" {
		return fmt.Sprintf("label %q: %s", e.Label, e.What)
	}
	return e.What
}

// CheckLabels checks the series labels of a push: each name and value
// against the length limits, and how many there are with the ones the
// server adds. labels are the labels as sent (after LabelName).
func (l Limits) CheckLabels(service string, labels map[string]string) error {
	if l.MaxLabelValueLength > 0 && len(service) > l.MaxLabelValueLength {
		return &LimitError{Label: "service_name", What: fmt.Sprintf("value is %d bytes, over the server's default limit of %d (-validation.max-length-label-value)", len(service), l.MaxLabelValueLength)}
	}
	for _, k := range sortedKeys(labels) {
		if err := l.checkLabel(k, labels[k]); err != nil {
			return err
		}
	}
	if n := len(labels) + len(serverAddedLabels); l.MaxLabelNamesPerSeries > 0 && n > l.MaxLabelNamesPerSeries {
		return &LimitError{What: fmt.Sprintf("%d labels per series (%d given, %d added by the server), over the server's default limit of %d (-validation.max-label-names-per-series): send fewer (%s)",
			n, len(labels), len(serverAddedLabels), l.MaxLabelNamesPerSeries, strings.Join(sortedKeys(labels), ", "))}
	}
	return nil
}

func (l Limits) checkLabel(name, value string) error {
	if l.MaxLabelNameLength > 0 && len(name) > l.MaxLabelNameLength {
		return &LimitError{Label: shorten(name, 80), What: fmt.Sprintf("name is %d bytes, over the server's default limit of %d (-validation.max-length-label-name)", len(name), l.MaxLabelNameLength)}
	}
	if l.MaxLabelValueLength > 0 && len(value) > l.MaxLabelValueLength {
		return &LimitError{Label: name, What: fmt.Sprintf("value is %d bytes, over the server's default limit of %d (-validation.max-length-label-value)", len(value), l.MaxLabelValueLength)}
	}
	if !utf8.ValidString(value) {
		return &LimitError{Label: name, What: "value is not valid UTF-8, which the server refuses"}
	}
	return nil
}

// CheckProfile checks a profile about to be pushed with the given series
// labels: the labels (CheckLabels, and again for each sample's labels,
// which the server makes series labels), the number of samples and of
// labels per sample, and the uncompressed size against both the profile
// size limit and the ingestion burst.
func (l Limits) CheckProfile(service string, labels map[string]string, p *profile.Profile) error {
	if err := l.CheckLabels(service, labels); err != nil {
		return err
	}
	if l.MaxProfileSamples > 0 && len(p.Sample) > l.MaxProfileSamples {
		return &LimitError{What: fmt.Sprintf("the profile has %d samples, over the server's default limit of %d (-validation.max-profile-stacktrace-samples)", len(p.Sample), l.MaxProfileSamples)}
	}
	series := len(labels) + len(serverAddedLabels)
	checked := map[string]bool{}
	for _, s := range p.Sample {
		if n := len(s.Label) + len(s.NumLabel); l.MaxSampleLabels > 0 && n > l.MaxSampleLabels {
			return &LimitError{What: fmt.Sprintf("a sample has %d labels, over the server's default limit of %d (-validation.max-profile-stacktrace-sample-labels)", n, l.MaxSampleLabels)}
		}
		extra := 0
		for k, vs := range s.Label {
			if _, dup := labels[k]; dup || k == "service_name" || len(vs) == 0 {
				continue // the series label wins; the sample's is dropped
			}
			extra++
			if key := k + "\x00" + vs[0]; !checked[key] {
				checked[key] = true
				if err := l.checkLabel(k, vs[0]); err != nil {
					return fmt.Errorf("a sample label: %w", err)
				}
			}
		}
		if l.MaxLabelNamesPerSeries > 0 && series+extra > l.MaxLabelNamesPerSeries {
			return &LimitError{What: fmt.Sprintf("%d labels per series with a sample's own %d, over the server's default limit of %d (-validation.max-label-names-per-series)",
				series+extra, extra, l.MaxLabelNamesPerSeries)}
		}
	}
	var size countingWriter
	if err := p.WriteUncompressed(&size); err != nil {
		return err
	}
	if l.MaxProfileSizeBytes > 0 && int(size) > l.MaxProfileSizeBytes {
		return &LimitError{What: fmt.Sprintf("the profile is %s uncompressed, over the server's default limit of %s (-validation.max-profile-size-bytes)", mib(int(size)), mib(l.MaxProfileSizeBytes))}
	}
	total := int(size) + len(service)
	for k, v := range labels {
		total += len(k) + len(v)
	}
	if l.IngestionBurstBytes > 0 && total > l.IngestionBurstBytes {
		return &LimitError{What: fmt.Sprintf("the push is %s uncompressed, over the server's default ingestion burst of %s (-distributor.ingestion-burst-size-mb), which refuses it however often it is retried", mib(total), mib(l.IngestionBurstBytes))}
	}
	return nil
}

func mib(n int) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
