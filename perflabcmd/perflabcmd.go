// Package perflabcmd runs the perflab command line from a user's own main
// package, so scenarios from another module can be measured, profiled and
// served exactly like the built-in ones. A scenario is a compile-time
// plugin: blank-import its package next to this one.
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/perflab/perflab/perflabcmd"
//		_ "github.com/perflab/perflab/scenarios/all" // the built-in scenarios, if wanted
//		_ "example.com/you/yourscenario"            // calls perflab.Register in init
//	)
//
//	func main() { os.Exit(perflabcmd.Main(os.Args[1:])) }
package perflabcmd

import "github.com/perflab/perflab/internal/cli"

// Main runs perflab with the given arguments (without the program name)
// and returns the process exit code: 0 on success, 1 on an error (and
// compare --fail-on's regression), 2 on a usage error, 3 when compare
// cannot make or judge a comparison, 130 when interrupted (143 by
// SIGTERM).
func Main(args []string) int { return cli.Main(args) }
