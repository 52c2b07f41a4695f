// Command flotilla is the single Flotilla binary: the local stack, the
// controllers and the CLI are its subcommands.
package main

import (
	"os"

	"github.com/flotilla-io/flotilla/internal/cli"
	"github.com/flotilla-io/flotilla/internal/localstack/component"
)

func main() {
	os.Exit(cli.Execute(component.NewCommand()))
}
