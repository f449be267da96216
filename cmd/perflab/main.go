// Command perflab benchmarks implementation variants and shows where the time goes.
package main

import (
	"os"

	"github.com/perflab/perflab/internal/cli"
	_ "github.com/perflab/perflab/scenarios/all"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
