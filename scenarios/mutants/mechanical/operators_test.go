package mechanical

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const opsSource = `package p

func f(xs []int, n int) int {
	total := 0
	for i := 0; i < n; i++ {
		if xs[i] == 0 {
			continue
		}
		if xs[i] > 9 {
			break
		}
		total = total * xs[i] % 7
	}
	return total
}
`

// Each operator's edits of a small function, by the replacement text: the
// comparisons get their neighbour and their negation, * / % and ++ are
// turned, break and continue swapped.
func TestEditsCoverEveryOperatorsCases(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", opsSource, 0)
	require.NoError(t, err)
	tf := fset.File(f.Pos())
	got := map[string][]string{}
	for _, e := range edits(f, []byte(opsSource), func(p token.Pos) int { return tf.Offset(p) }) {
		got[e.op] = append(got[e.op], e.text)
	}
	assert.Subset(t, got[OpCompare], []string{"i <= n", "i >= n", "xs[i] != 0", "xs[i] >= 9", "xs[i] <= 9"})
	assert.Subset(t, got[OpArith], []string{"i--", "total / xs[i]", "total * xs[i] * 7"})
	assert.ElementsMatch(t, []string{"break", "continue"}, got[OpLoop])
}
