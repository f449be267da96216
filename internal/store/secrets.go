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

// RedactURL hides the user information (user:password@) of every URL in
// s: "http://u:pw@host/x" becomes "http://xxxxx@host/x", so that a reader
// can tell credentials were given without seeing them.
func RedactURL(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
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
