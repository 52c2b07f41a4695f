// Command flotilla is the single Flotilla binary: the local stack, the
// controllers and the CLI are its subcommands.
package main

import (
	"fmt"
	"os"

	"github.com/flotilla-io/flotilla/internal/cli"
)

func main() {
	if err := cli.NewRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
