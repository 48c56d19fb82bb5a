package mechanical

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	return root
}

// Every generated mutant applies exactly once, changes the file, and
// type-checks; every operator yields some mutant of the timer wheel.
func TestGenerateMakesApplicableMutantsOfEveryOperator(t *testing.T) {
	root := moduleRoot(t)
	g, err := Generate(root, Target{Dir: "impl/timerwheel", Families: []string{"./scenarios/tw"}})
	require.NoError(t, err)
	require.NotEmpty(t, g.Mutants)
	byOp := map[string]int{}
	keys := map[string]bool{}
	for _, m := range g.Mutants {
		byOp[m.Op]++
		assert.False(t, keys[m.Key], "key %s twice", m.Key)
		keys[m.Key] = true
		require.Len(t, m.Variants, 1)
		v := m.Variants[0]
		src, err := os.ReadFile(filepath.Join(root, v.File))
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(src), v.Old), "%s: old occurs once", v.ID)
		assert.NotEqual(t, v.Old, v.New, v.ID)
		_, err = v.Apply(root, t.TempDir())
		assert.NoError(t, err, v.ID)
	}
	for _, op := range []string{OpCompare, OpArith, OpDelete, OpBranch, OpReturn, OpConst} {
		assert.Positive(t, byOp[op], "operator %s made no mutant of impl/timerwheel (%v)", op, byOp)
	}
	t.Logf("impl/timerwheel: %d mutants %v, %d uncompiled %v", len(g.Mutants), byOp, sum(g.Uncompiled), g.Uncompiled)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m { //windtunnel:unordered a sum
		n += v
	}
	return n
}
