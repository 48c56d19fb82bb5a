package audit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheClaimPhaseJoinsItsPartsInOrder runs two fixture packages, the
// first slower than the second, with one process and with two at once, and
// one check declared timed. Both give the same records, byte for byte, in
// the packages' order with each package's timed check after its untimed
// ones; with two processes the packages did overlap (so the join, not the
// end order, made the order), and the timed check began only once every
// other check had ended.
func TestTheClaimPhaseJoinsItsPartsInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const slow, fast = "./scenarios/audit/testdata/order/slow", "./scenarios/audit/testdata/order/fast"
	files := map[int][]byte{}
	for _, procs := range []int{1, 2} {
		orderLog := filepath.Join(t.TempDir(), "order.log")
		r := Runner{Root: root, Out: t.TempDir(), Pkgs: []string{slow, fast}, Log: io.Discard, Timeout: 5 * time.Minute,
			ClaimProcs: procs, Timed: map[string][]string{fast: {"TestFastTimed"}}, Env: map[string]string{"WINDTUNNEL_ORDER_LOG": orderLog}}
		recs, failed, err := r.RunClaims(context.Background(), "^Test", 0)
		require.NoError(t, err)
		assert.Empty(t, failed)
		var ids []string
		for _, rec := range recs {
			ids = append(ids, rec.ID)
		}
		assert.Equal(t, []string{"FX-1", "FX-2", "FX-3", "FX-4"}, ids, "%d processes", procs)
		files[procs], err = os.ReadFile(filepath.Join(r.Out, "claims", "claims.jsonl"))
		require.NoError(t, err)

		spans := readOrderLog(t, orderLog)
		require.Len(t, spans, 4)
		timed := spans["TestFastTimed"]
		for name, s := range spans { //windtunnel:unordered every span is compared with the timed one
			if name != "TestFastTimed" {
				assert.Less(t, s[1], timed[0], "%d processes: %s ended after the timed check began", procs, name)
			}
		}
		if procs == 2 {
			assert.Less(t, spans["TestFastUntimed"][1], spans["TestSlowSecond"][1],
				"with two processes the second package's check must end before the first package's last")
		}
	}
	assert.Equal(t, string(files[1]), string(files[2]), "claims.jsonl with one process and with two")
}

// readOrderLog reads the fixtures' "name start end" lines.
func readOrderLog(t *testing.T, path string) map[string][2]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string][2]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		require.Len(t, f, 3, "%q", l)
		a, err1 := strconv.ParseInt(f[1], 10, 64)
		b, err2 := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		out[f[0]] = [2]int64{a, b}
	}
	return out
}
