package simtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryTestBinaryAcceptsTheSettings: `go test ./... -sim.seeds=N` must
// not stop at a package whose test binary lacks the -sim.* flags ("flag
// provided but not defined"). Every test binary of the module links this
// package, which registers them; a new test package without simflags_test.go
// fails here, naming itself.
func TestEveryTestBinaryAcceptsTheSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module with go list")
	}
	const self = "github.com/windtunnel/windtunnel/sim/simtest"
	// A package compiled again for a test binary is listed as "path [x.test]".
	cmd := exec.Command("go", "list", "-test", "-f",
		`{{if eq .Name "main"}}{{.ImportPath}}{{range .Deps}},{{.}}{{end}}{{end}}`, "github.com/windtunnel/windtunnel/...")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var missing []string
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		bin, deps, _ := strings.Cut(strings.TrimSpace(line), ",")
		if !strings.HasSuffix(bin, ".test") {
			continue
		}
		n++
		links := slices.ContainsFunc(strings.Split(deps, ","), func(d string) bool { return d == self || strings.HasPrefix(d, self+" [") })
		if !links && bin != self+".test" {
			missing = append(missing, strings.TrimSuffix(bin, ".test"))
		}
	}
	require.Greater(t, n, 30, "go list found the module's test binaries:\n%s", out)
	require.Empty(t, missing, "these test packages do not register the -sim.* flags; add a simflags_test.go importing %s", self)
}
