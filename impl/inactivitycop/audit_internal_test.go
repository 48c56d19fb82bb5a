package inactivitycop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TW-7: the audit finds a deliberately lost connection (a live deadline the
// wheel does not hold) and a deliberately late one (a deadline shortened
// without re-arming). It counts them in every audited pass. It is clean on
// the untouched connections and once the damage is repaired.
func TestAuditFindsLostAndLate(t *testing.T) {
	origin := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Audit = true
	cop, err := NewCop(cfg, origin)
	require.NoError(t, err)
	var conns []*Conn
	for range 5 {
		c, _ := cop.Open(origin)
		require.NoError(t, cop.SetInactivityTimeout(c, origin, 30*time.Second))
		conns = append(conns, c)
	}
	r := cop.Pass(origin.Add(time.Second))
	require.NotNil(t, r.Audit)
	assert.Equal(t, 5, r.Audit.Checked)
	assert.True(t, r.Audit.Lost == nil && r.Audit.Late == nil)

	lost, late := conns[1], conns[3]
	cop.wheel.Cancel(&lost.timer)                        // a bookkeeping bug drops it
	late.inactivityAt = origin.Add(5 * time.Second)      // shortened, not re-armed
	cop.NetActivity(conns[4], origin.Add(2*time.Second)) // fine: later only
	r = cop.Pass(origin.Add(2 * time.Second))
	assert.Equal(t, []*Conn{lost}, r.Audit.Lost)
	assert.Equal(t, []*Conn{late}, r.Audit.Late)
	r = cop.Pass(origin.Add(3 * time.Second))
	assert.Len(t, r.Audit.Lost, 1)
	assert.Equal(t, int64(2), cop.m.AuditLost.Value())
	assert.Equal(t, int64(2), cop.m.AuditLate.Value())

	// Late means late: the wheel would fire it at 31 s, not after 5 s.
	r = cop.Pass(origin.Add(6 * time.Second))
	assert.Zero(t, r.Fired, "the late connection is missed at its deadline")

	cop.rearm(lost)
	cop.rearm(late)
	r = cop.Pass(origin.Add(7 * time.Second))
	assert.Empty(t, r.Audit.Lost)
	assert.Empty(t, r.Audit.Late)
	assert.Equal(t, 1, r.Fired, "re-armed, the overdue one fires at the next pass")

	// Without the flag the pass does not audit.
	cop.cfg.Audit = false
	cop.wheel.Cancel(&lost.timer)
	r = cop.Pass(origin.Add(8 * time.Second))
	assert.Nil(t, r.Audit)
	assert.Len(t, cop.Audit().Lost, 1, "an explicit Audit still finds it")
}
