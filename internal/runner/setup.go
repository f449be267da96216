package runner

import (
	"context"
	"fmt"
	"io"

	"github.com/perflab/perflab"
)

// newCase calls v.New and gives up on it when ctx ends: a New that blocks
// (a dial, a lock, a server that never answers) held an interrupted run
// for as long as it blocked, for ever if it hung, and a second signal then
// killed the process with the run unsaved (issue 26). The abandoned call
// is left to finish in the background, and what it returns then is closed.
// A panic in New is raised again on the caller's goroutine, as when New
// ran there.
func newCase(ctx context.Context, v *perflab.Variant, p perflab.Params) (perflab.Case, error) {
	type result struct {
		cs       perflab.Case
		err      error
		panicked any
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			res.panicked = recover()
			ch <- res
		}()
		res.cs, res.err = v.New(p)
	}()
	select {
	case res := <-ch:
		if res.panicked != nil {
			panic(res.panicked) // the caller's recover says "setup panicked"
		}
		return res.cs, res.err
	case <-ctx.Done():
		go func() {
			if res := <-ch; res.cs != nil {
				if cl, ok := res.cs.(io.Closer); ok {
					cl.Close()
				}
			}
		}()
		return nil, fmt.Errorf("%w: %w", errAbandoned, ctx.Err())
	}
}
