package simdb_test

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// A statement reads the snapshot at its start: a write that commits while
// the statement is in flight is invisible to it, and visible to the next.
// The Hook makes the first statement slow (50ms) so the write lands inside.
func Example() {
	type tables struct{ members map[string]bool }
	var out []string
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		ctx := context.Background()
		first := true
		db, err := simdb.New(s, simdb.Config{
			PoolSize:   2,
			Latency:    simdb.Latency{BaseMin: 10 * time.Millisecond, BaseMax: 10 * time.Millisecond},
			Statements: []string{"is_member"},
			Hook: func(st simdb.Statement) simdb.Fault {
				if st.Write || !first {
					return simdb.Fault{}
				}
				first = false
				return simdb.Fault{Latency: 50 * time.Millisecond, Fixed: true}
			},
		}, tables{members: map[string]bool{"ann": true}})
		if err != nil {
			s.Failf("%v", err)
		}
		isMember := func(who string) bool {
			c, err := db.Acquire(ctx)
			if err != nil {
				s.Failf("%v", err)
			}
			defer c.Release()
			ok, err := simdb.Query(ctx, c, "is_member", nil, func(t *tables) bool { return t.members[who] })
			if err != nil {
				s.Failf("%v", err)
			}
			return ok
		}
		s.Go("revoke", func() {
			at, _ := db.Write(ctx, "revoke ann", func(t *tables) { t.members["ann"] = false })
			out = append(out, fmt.Sprintf("revoke committed at +%v", at.Sub(sim.Epoch)))
		})
		ok := isMember("ann")
		out = append(out, fmt.Sprintf("read from +0s to +%v: member=%v", s.Elapsed(), ok))
		start := s.Elapsed()
		ok = isMember("ann")
		out = append(out, fmt.Sprintf("read from +%v to +%v: member=%v", start, s.Elapsed(), ok))
		out = append(out, fmt.Sprintf("statements=%d commits=%d", db.Stats().Statements, len(db.Commits())))
	})
	if res.Err != nil {
		fmt.Println(res.Err)
	}
	for _, l := range out {
		fmt.Println(l)
	}
	// Output:
	// revoke committed at +10ms
	// read from +0s to +50ms: member=true
	// read from +50ms to +60ms: member=false
	// statements=2 commits=1
}
