package store

import (
	"regexp"
	"strings"
)

// Redacted replaces a secret in what the store records and what perflab
// prints.
const Redacted = "xxxxx"

// userinfo matches the user information of a URL anywhere in a string:
// the scheme, then everything up to the last "@" before the path, query or
// fragment (a password may hold an "@", and url.Parse refuses some of
// those, so this does not parse).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@`)

// urlTail matches the query and fragment of a URL anywhere in a string:
// after a scheme and the authority and path, from the first "?" or "#" to
// the next space.
var urlTail = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^?#\s]*)([?#]\S*)`)

// RedactURL hides the user information (user:password@) and the query and
// fragment values of every URL in s: "http://u:pw@host/x?token=t" becomes
// "http://xxxxx@host/x?token=xxxxx", so that a reader can tell credentials
// were given without seeing them. Every value goes, not only those named
// like secrets: a token's parameter may be called anything (issue 26:
// --push 'http://h/?token=…&password=…' was stored in run.json and shown).
func RedactURL(s string) string {
	if strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	if strings.ContainsAny(s, "?#") {
		s = urlTail.ReplaceAllStringFunc(s, func(m string) string {
			sub := urlTail.FindStringSubmatch(m)
			return sub[1] + redactValues(sub[2])
		})
	}
	return s
}

// redactValues replaces each value of a query or fragment, "?a=1&b#c=2"
// (delimiters ? # & ;), keeping the names: "?a=xxxxx&xxxxx#c=xxxxx". A
// part with no "=" may be a bare token, and goes whole.
func redactValues(tail string) string {
	var b strings.Builder
	for len(tail) > 0 {
		b.WriteByte(tail[0]) // the delimiter
		tail = tail[1:]
		end := strings.IndexAny(tail, "?#&;")
		if end < 0 {
			end = len(tail)
		}
		part := tail[:end]
		tail = tail[end:]
		if part == "" {
			continue
		}
		if name, _, ok := strings.Cut(part, "="); ok {
			b.WriteString(name + "=" + Redacted)
		} else {
			b.WriteString(Redacted)
		}
	}
	return b.String()
}

// secretFlag reports whether a flag name names a secret: its value is
// redacted wherever a command line is recorded.
func secretFlag(name string) bool {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range []string{"password", "passwd", "secret", "token", "api-key", "apikey"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// RedactArgs returns a copy of a command line with its secrets hidden:
// the user information of URLs (run --push http://user:pw@host) and the
// values of flags named like secrets (--basic-auth-password X or
// --basic-auth-password=X). The store records only redacted command
// lines, and redacts again what it reads, for runs stored before.
func RedactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, _, hasValue := strings.Cut(a, "=")
			if secretFlag(name) {
				if hasValue {
					out[i] = name + "=" + Redacted
				} else {
					out[i] = a
					if i+1 < len(args) {
						i++
						out[i] = Redacted
					}
				}
				continue
			}
		}
		out[i] = RedactURL(a)
	}
	return out
}
