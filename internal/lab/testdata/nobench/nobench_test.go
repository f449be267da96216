package nobench

import "testing"

func TestNothing(t *testing.T) {}
