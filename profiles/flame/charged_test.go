package flame

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perflab/perflab/profiles"
)

// TestDecoderCharges: what the decoder holds for labels and what inlined
// frames add to every stack were not counted against its memory limit
// (issue 26: 32 uploads of a 172 KB label-heavy profile took 10.2 GB
// against a 2 GiB budget). Each shape is read under a limit its samples
// alone fit in, and must be refused; under a limit that covers what it
// holds, it is read.
func TestDecoderCharges(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "main.f"}
	one := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	base := func() *profile.Profile {
		return &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}, Function: []*profile.Function{fn}}
	}
	// 20,000 samples × 64 labels (one map shared: the test stays small).
	labels := map[string][]string{}
	for k := range 64 {
		labels[fmt.Sprintf("k%d", k)] = []string{fmt.Sprintf("value-%d", k)}
	}
	labeled := base()
	labeled.Location = []*profile.Location{one}
	for i := range 20_000 {
		labeled.Sample = append(labeled.Sample, &profile.Sample{Location: []*profile.Location{one}, Value: []int64{int64(i)}, Label: labels})
	}
	// One location of 10,000 inlined frames, in 200 samples.
	deep := base()
	loc := &profile.Location{ID: 1}
	for range 10_000 {
		loc.Line = append(loc.Line, profile.Line{Function: fn})
	}
	deep.Location = []*profile.Location{loc}
	for i := range 200 {
		deep.Sample = append(deep.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{int64(i)}})
	}
	for _, tc := range []struct {
		name  string
		p     *profile.Profile
		holds int64 // bytes the shape holds, by its count
	}{
		{"labels", labeled, 20_000 * 64 * costLabel},
		{"inline chain", deep, 200 * 9_999 * costInline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			// The samples' own cost, with room: what was charged before.
			samples := int64(len(tc.p.Sample))*(costSampleRow+costFrameRef+costValue) + 1<<20
			_, err := ReadSource(bytes.NewReader(buf.Bytes()), profiles.Limits{Memory: samples + tc.holds/2})
			if !errors.Is(err, profiles.ErrMemoryLimit) {
				t.Errorf("%d KB of profile holding %d KB read under a limit of %d KB: %v, want the memory limit", buf.Len()>>10, tc.holds>>10, (samples+tc.holds/2)>>10, err)
			}
			if _, err := ReadSource(bytes.NewReader(buf.Bytes()), profiles.Limits{Memory: samples + 2*tc.holds}); err != nil {
				t.Errorf("under a limit of %d KB: %v", (samples+2*tc.holds)>>10, err)
			}
		})
	}
}
