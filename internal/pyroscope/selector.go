package pyroscope

import (
	"strconv"
	"strings"
)

// selectorFix returns the selector s should have been when its braces
// are missing or a value is not quoted, both of which the server refuses
// with a parse error that does not say so: service_name=perflab gives
// {service_name="perflab"}. ok is false when s needs no fix, or is not
// a list of name, operator, value that it can be sure of.
func selectorFix(s string) (fixed string, ok bool) {
	s = strings.TrimSpace(s)
	inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}"))
	changed := !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}")
	var out []string
	for _, m := range splitMatchers(inner) {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		name, op, value, found := cutOperator(m)
		if !found || name == "" || value == "" {
			return "", false
		}
		if value[0] != '"' && value[0] != '`' {
			value, changed = strconv.Quote(value), true
		}
		out = append(out, name+op+value)
	}
	if !changed {
		return "", false
	}
	return "{" + strings.Join(out, ",") + "}", true
}

// splitMatchers splits a selector's inside at the commas outside quotes.
func splitMatchers(s string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == '\\' && quote == '"':
			i++ // an escaped character inside "…"
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '`'):
			quote = c
		case quote == 0 && c == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// cutOperator splits a matcher at its operator: =~, !~, != or =.
func cutOperator(m string) (name, op, value string, ok bool) {
	i := strings.IndexAny(m, "=!")
	if i < 0 {
		return "", "", "", false
	}
	op = m[i : i+1]
	if i+1 < len(m) && (m[i:i+2] == "=~" || m[i:i+2] == "!~" || m[i:i+2] == "!=") {
		op = m[i : i+2]
	} else if op == "!" {
		return "", "", "", false
	}
	return strings.TrimSpace(m[:i]), op, strings.TrimSpace(m[i+len(op):]), true
}
