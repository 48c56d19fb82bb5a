package mutants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestEveryLockHasAMutant: every line of the claimed packages that takes a
// lock (X.Lock() or X.RLock() alone on its line) is left out by a lock
// mutant or a hand-written Race mutant, or is exempt with a reason. So a
// lock added to impl is checked by the race detector without anyone writing
// a mutant for it, and a form lockSites cannot read fails here instead of
// going unchecked.
func TestEveryLockHasAMutant(t *testing.T) {
	root := filepath.Join("..", "..")
	derived, err := Locks(root)
	require.NoError(t, err)
	cs, err := claims.Claims()
	require.NoError(t, err)
	require.NoError(t, Validate(append(All(), derived...), cs))
	covered := map[string][][2]int{} // file -> edited byte ranges
	for _, m := range append(All(), derived...) {
		if !m.Race {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, m.File))
		require.NoError(t, err)
		at := strings.Index(string(data), m.Old)
		require.GreaterOrEqual(t, at, 0, m.ID)
		covered[m.File] = append(covered[m.File], [2]int{at, at + len(m.Old)})
	}
	locks, exempt := 0, 0
	for _, fam := range lockFamilies {
		files, err := packageSources(root, fam.dir)
		require.NoError(t, err)
		for _, f := range files {
			offset, fn := 0, ""
			for i, line := range strings.Split(f.text, "\n") {
				if m := funcLine.FindStringSubmatch(line); m != nil {
					fn = m[1]
				}
				if lockLine.MatchString(line) {
					locks++
					switch {
					case lockExempt[filepath.Base(fam.dir)+"."+fn] != "":
						exempt++
					case !overlaps(covered[f.rel], offset, len(line)):
						t.Errorf("%s:%d (%s) takes a lock no mutant leaves out: %q", f.rel, i+1, fn, strings.TrimSpace(line))
					}
				}
				offset += len(line) + 1
			}
		}
	}
	t.Logf("%d locks in the claimed packages: %d derived lock mutants, the rest hand-written Race mutants, %d exempt", locks, len(derived), exempt)
	assert.GreaterOrEqual(t, len(derived), 20)
	weak := 0
	for _, m := range derived {
		assert.Equal(t, KindLock, m.Kind)
		assert.True(t, m.Race, m.ID)
		assert.Equal(t, 1, strings.Count(mustRead(t, filepath.Join(root, m.File)), m.Old), "%s: its snippet occurs exactly once", m.ID)
		if strings.HasSuffix(m.ID, "-as-read-lock") {
			assert.NotContains(t, m.New, ".Lock()", "%s takes no write lock", m.ID)
			assert.Contains(t, m.New, ".RLock()", "%s takes a read lock instead", m.ID)
			weak++
			continue
		}
		assert.NotContains(t, m.New, "Lock()", "%s leaves its lock out", m.ID)
	}
	// The write locks of the reader/writer locks: the collector's data
	// lock (Record, Prune, the drain's swaps), the span filter's registry
	// (register, unregister).
	assert.Equal(t, 5, weak, "write locks weakened to read locks")
}

// TestNoLockIsExemptForNothing: each exemption names a function of its
// package that takes a lock, so a renamed or removed one does not linger.
func TestNoLockIsExemptForNothing(t *testing.T) {
	root := filepath.Join("..", "..")
	//windtunnel:unordered each exemption is checked on its own
	for name, why := range lockExempt {
		pkg, fn, ok := strings.Cut(name, ".")
		require.True(t, ok, name)
		assert.NotEmpty(t, why, name)
		found := false
		for _, fam := range lockFamilies {
			if filepath.Base(fam.dir) != pkg {
				continue
			}
			files, err := packageSources(root, fam.dir)
			require.NoError(t, err)
			for _, f := range files {
				for _, s := range lockSites(f.text) {
					found = found || s.fn == fn
				}
			}
		}
		assert.True(t, found, "exempt lock %s: no such function takes a lock", name)
	}
}

// TestLockSitesReadEveryForm: a deferred unlock (the snippet runs on until
// it is unique), an unlock further down at the same depth, a read lock,
// and a lock whose unlock is elsewhere (no mutant).
func TestLockSitesReadEveryForm(t *testing.T) {
	src := strings.Join([]string{
		"package p",
		"func (c *C) A() int {",
		"\tc.mu.Lock()",
		"\tdefer c.mu.Unlock()",
		"\treturn c.a",
		"}",
		"func (c *C) B() int {",
		"\tc.mu.Lock()",
		"\tdefer c.mu.Unlock()",
		"\treturn c.b",
		"}",
		"func (c *C) R() int {",
		"\tif c.ok {",
		"\t\tc.rw.RLock()",
		"\t\tn := c.n",
		"\t\tc.rw.RUnlock()",
		"\t\treturn n",
		"\t}",
		"\treturn 0",
		"}",
		"func (c *C) Held() {",
		"\tc.mu.Lock()",
		"\tc.held = true",
		"}",
	}, "\n")
	sites := lockSites(src)
	require.Len(t, sites, 3)
	assert.Equal(t, lockSite{fn: "A", obj: "c.mu", kind: "Lock", old: "\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\treturn c.a", new: "\treturn c.a"}, sites[0])
	assert.Equal(t, "B", sites[1].fn)
	assert.Equal(t, lockSite{fn: "R", obj: "c.rw", kind: "RLock", old: "\t\tc.rw.RLock()\n\t\tn := c.n\n\t\tc.rw.RUnlock()", new: "\t\tn := c.n"}, sites[2])
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return string(data)
}
