package runner

import "fmt"

// TooFewForInterval is the one sentence perflab says, before a run and in
// its warnings, when n repetitions give a case no 95% interval of its
// median (n < MinIntervalReps): before issue 25 the same fact was said in
// three ways, with benchmath's "need >= 6 samples" among them.
func TooFewForInterval(n int) string {
	reps := fmt.Sprintf("%d repetitions are", n)
	if n == 1 {
		reps = "1 repetition is"
	}
	return fmt.Sprintf("%s too few for a 95%% interval (time/op shows ±∞): use --count %d or more", reps, MinIntervalReps)
}
