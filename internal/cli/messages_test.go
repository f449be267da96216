package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestQueryDefaultCopiable: the default selector in flame's help is one
// the server accepts when copied, not pflag's escaped form.
func TestQueryDefaultCopiable(t *testing.T) {
	out, _, _ := execute(t, "flame", "--help")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, `(default {service_name="perflab"})`) || strings.Contains(out, `\"`) {
		t.Errorf("flame --help:\n%s", out)
	}
}

// containsWords says s holds the words of sub in order, whatever the
// spaces and line breaks between them: notes are wrapped to 80 columns.
func containsWords(s, sub string) bool {
	return strings.Contains(strings.Join(strings.Fields(s), " "), strings.Join(strings.Fields(sub), " "))
}

// TestNoSliceDefaults: no help shows a list flag's default as a Go slice
// ("[wall,cpu,mutex,block]").
func TestNoSliceDefaults(t *testing.T) {
	root := NewRoot(&IO{Out: new(strings.Builder), Err: new(strings.Builder)})
	var visit func(args []string, cmds []*cobra.Command)
	visit = func(args []string, cmds []*cobra.Command) {
		for _, c := range cmds {
			a := append(append([]string(nil), args...), c.Name())
			out, _, _ := execute(t, append(a, "--help")...)
			if flat := strings.Join(strings.Fields(out), " "); strings.Contains(flat, "(default [") {
				t.Errorf("perflab %s --help shows a Go slice:\n%s", strings.Join(a, " "), out)
			}
			visit(a, c.Commands())
		}
	}
	visit(nil, root.Commands())
}
