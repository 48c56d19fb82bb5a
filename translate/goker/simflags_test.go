package goker_test

// The simulation settings (-sim.seeds, -sim.strategy, ...) are flags of
// sim/simtest; importing it lets `go test ./... -sim.seeds=N` pass them to
// this package as well (TestEveryTestBinaryAcceptsTheSettings enforces it).
import _ "github.com/windtunnel/windtunnel/sim/simtest"
