package cli

import (
	"strings"
	"testing"
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
