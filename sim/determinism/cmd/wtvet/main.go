// Command wtvet runs windtunnel's determinism analyzer as a vet tool:
//
//	go build -o wtvet ./sim/determinism/cmd/wtvet
//	go vet -vettool=$PWD/wtvet ./mypkg/...
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/windtunnel/windtunnel/sim/determinism"
)

func main() { singlechecker.Main(determinism.Analyzer) }
