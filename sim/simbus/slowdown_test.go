package simbus_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// TestSlowdownDelaysExactlyWhatIsSentInItsWindow: with zero delay and a
// slowdown of 50ms over [100ms, 200ms), messages sent inside arrive 50ms
// late, one sent before arrives at once, and one sent right after the
// window waits behind the slowed ones (the link is FIFO). Nothing is lost;
// the other subscriber gets every message at once.
func TestSlowdownDelaysExactlyWhatIsSentInItsWindow(t *testing.T) {
	var r result
	sendAt := []time.Duration{ms(50), ms(100), ms(150), ms(199), ms(200), ms(260)}
	run(t, 1, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{})
		w.subscribe("slow", simbus.Faults{Slowdowns: []simbus.Slowdown{{Window: simbus.Window{Start: ms(100), End: ms(200)}, Extra: ms(50)}}})
		w.subscribe("ok", simbus.Reliable())
		for _, at := range sendAt {
			_ = s.Sleep(bg, at-s.Elapsed())
			w.publish("writer")
		}
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	want := []time.Duration{ms(50), ms(150), ms(200), ms(249), ms(249), ms(260)}
	require.Len(t, r.recs["slow"], len(sendAt))
	for i, rec := range r.recs["slow"] {
		require.Equal(t, simbus.Delivered, rec.Fate(), "sent at +%v", sendAt[i])
		assert.Equal(t, []time.Time{sim.Epoch.Add(want[i])}, rec.Calls, "sent at +%v", sendAt[i])
	}
	for i, rec := range r.recs["ok"] {
		assert.Equal(t, []time.Time{sim.Epoch.Add(sendAt[i])}, rec.Calls)
	}
}

// TestSlowdownsAreValidated: windows from the origin on, non-empty, not
// overlapping, each adding a positive extra of at most an hour.
func TestSlowdownsAreValidated(t *testing.T) {
	w := func(a, b time.Duration) simbus.Window { return simbus.Window{Start: a, End: b} }
	for name, sds := range map[string][]simbus.Slowdown{ //windtunnel:unordered independent cases
		"empty window":   {{Window: w(ms(5), ms(5)), Extra: ms(1)}},
		"negative start": {{Window: w(-ms(1), ms(5)), Extra: ms(1)}},
		"no extra":       {{Window: w(0, ms(5))}},
		"negative extra": {{Window: w(0, ms(5)), Extra: -ms(1)}},
		"past an hour":   {{Window: w(0, ms(5)), Extra: time.Hour + 1}},
		"overlapping":    {{Window: w(ms(10), ms(20)), Extra: ms(1)}, {Window: w(0, ms(11)), Extra: ms(1)}},
	} {
		assert.Error(t, simbus.Faults{Slowdowns: sds}.Validate(), name)
	}
	ok := simbus.Faults{Slowdowns: []simbus.Slowdown{{Window: w(ms(10), ms(20)), Extra: time.Hour}, {Window: w(0, ms(10)), Extra: time.Nanosecond}}}
	assert.NoError(t, ok.Validate())
	assert.Contains(t, ok.String(), "slowdowns=[+0s,+10ms)+1ns [+10ms,+20ms)+1h0m0s")
	assert.NotContains(t, simbus.Reliable().String(), "slowdowns")
}
