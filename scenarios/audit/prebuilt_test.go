package audit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// The fixture packages' test binaries, and the failfast fixture's schema
// build, made once per test process by Runner.Build (as `audit build -bin`
// makes them) for the tests whose subject is not the build: the claim
// phase's order, its determinism check, the one budget of RunAudit. Each of
// those built the same binaries of its own before, and linking them was most
// of the package's CPU. The tests whose subject is the build (prebuilt
// against own binaries, a package that does not build, the mutants' own
// overlays) still build their own.
var sharedBuild struct {
	once sync.Once
	dir  string
	err  error
}

// sharedFixturePkgs are the packages prebuiltFixtures builds.
var sharedFixturePkgs = []string{
	"./scenarios/audit/testdata/order/slow",
	"./scenarios/audit/testdata/order/fast",
	"./scenarios/audit/testdata/order/meet",
	"./scenarios/audit/testdata/determinism",
}

// prebuiltFixtures is the directory of the shared binaries, for Runner.Bin.
// Two of the tests that use it run beside each other (t.Parallel): the first
// to ask builds, and the other waits for it.
func prebuiltFixtures(t *testing.T) string {
	t.Helper()
	sharedBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "windtunnel-audit-fixtures-")
		if err != nil {
			sharedBuild.err = err
			return
		}
		sharedBuild.dir = dir // TestMain removes it, whatever happens next
		root, err := filepath.Abs("../..")
		if err != nil {
			sharedBuild.err = err
			return
		}
		b := Runner{Root: root, Bin: dir, Pkgs: sharedFixturePkgs, Log: io.Discard, Timeout: 5 * time.Minute}
		sharedBuild.err = b.Build(context.Background(), []mutants.Mutant{failfastMutant()}, 2)
	})
	require.NoError(t, sharedBuild.err, "building the shared fixture binaries")
	return sharedBuild.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBuild.dir != "" {
		if err := os.RemoveAll(sharedBuild.dir); err != nil {
			fmt.Fprintf(os.Stderr, "removing the shared fixture binaries: %v\n", err)
		}
	}
	os.Exit(code)
}
