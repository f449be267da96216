// Command perflab benchmarks implementation variants and shows where the time goes.
package main

import (
	"os"

	"github.com/perflab/perflab/perflabcmd"
	_ "github.com/perflab/perflab/scenarios/all"
)

func main() { os.Exit(perflabcmd.Main(os.Args[1:])) }
