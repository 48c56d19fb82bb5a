package ms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// probeCancelledWhileWaiting counts requests that gave up while another
// request's load of their user ran: they were waiting for the user's lock.
const probeCancelledWhileWaiting = "ms/cancelled-while-waiting-for-the-user-lock"

// TestMS6_CancelledWaitIsNoTimeout checks the other end of MS-6's wait: a
// request whose own context ends while it waits for its user's lock has
// not timed out waiting. It fails with its context's error, runs no point
// check, and counts no wait_timeout fallback. The random MS-7 world
// cancels requests too, but never compares the counter there. Here it is
// made on purpose. On one pod, a cold check of one user starts a load that
// takes 1.5 s (below LockWait, 2 s, so no wait times out). Then 3 to 6
// other checks of the user ask during its first half second, most of them
// with a deadline that ends before the load does. Every check that was not
// cancelled must answer the tables' truth from the one load, every
// cancelled one must fail with its deadline, and the database must run one
// load and no point check, with the wait_timeout counter unmoved.
func TestMS6_CancelledWaitIsNoTimeout(t *testing.T) {
	const nChannels = 8
	const load = 1500 * time.Millisecond
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-6", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true, Tally: map[string]int64{}}
			r := s.Rand()
			members := [][]int{{}}
			for c := 1; c <= nChannels; c++ {
				if r.IntN(2) == 0 {
					members[0] = append(members[0], c)
				}
			}
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			loadStart, loadEnd := time.Duration(-1), time.Duration(-1)
			db := simdb.Config{PoolSize: 8, Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
				if st.Name == pods.StmtActiveMemberships && loadStart < 0 {
					loadStart = s.Elapsed()
					loadEnd = loadStart + load
					return simdb.Fault{Fixed: true, Latency: load, Required: true}
				}
				return simdb.Fault{}
			}}
			w, err := onePod(s, tables, db, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			if lw := pod.MS.Config().LockWait; lw <= load {
				return smp, fmt.Errorf("MS-6: LockWait %v is not above the load's %v: waits would time out", lw, load)
			}
			ctx := context.Background()
			before, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-6: %w", err)
			}
			waiters := 3 + r.IntN(4)
			var wrong []string
			wg := s.NewWaitGroup("checks")
			wg.Add(1 + waiters)
			for i := range 1 + waiters {
				at, deadline := time.Duration(0), time.Duration(0)
				if i > 0 {
					at = time.Millisecond + time.Duration(r.Int64N(int64(500*time.Millisecond)))
					if r.IntN(4) != 0 { // most waiters give up before the load ends
						deadline = 100*time.Millisecond + time.Duration(r.Int64N(int64(800*time.Millisecond)))
					}
				}
				ch := channel(1 + r.IntN(nChannels))
				s.Go(fmt.Sprintf("check%d", i), func() {
					defer wg.Done()
					if err := s.Sleep(ctx, at); err != nil {
						return
					}
					rctx, cancel := ctx, context.CancelFunc(func() {})
					if deadline > 0 {
						rctx, cancel = s.WithTimeout(ctx, deadline)
					}
					defer cancel()
					got, err := pod.MS.IsMember(rctx, community, user(1), ch)
					smp.Of++
					want := tables.IsActiveMember(community, user(1), ch)
					switch {
					case deadline > 0 && rctx.Err() != nil:
						smp.Tally["cancelled"]++
						if s.Elapsed() < loadEnd {
							s.Probe(probeCancelledWhileWaiting)
						}
						if !errors.Is(err, context.DeadlineExceeded) {
							wrong = append(wrong, fmt.Sprintf("check %d, cancelled at +%v while the load ran, returned %v, %v instead of its deadline's error", i, s.Elapsed(), got, err))
						}
					case err != nil || got != want:
						wrong = append(wrong, fmt.Sprintf("check %d at +%v: %v, %v; truth %v", i, s.Elapsed(), got, err, want))
					default:
						smp.Tally["answered"]++
					}
				})
			}
			if err := wg.Wait(ctx); err != nil {
				return smp, err
			}
			after, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-6: %w", err)
			}
			d := after.sub(before)
			if d.waitTimeout != 0 || d.points != 0 || d.loads != 1 {
				wrong = append(wrong, fmt.Sprintf("no wait timed out, yet %s", d))
			}
			smp.Witness = fmt.Sprintf("%d checks of one user during a %v load: %d cancelled while waiting, %d answered from the load; %s", 1+waiters, load, smp.Tally["cancelled"], smp.Tally["answered"], d)
			if len(wrong) > 0 {
				smp.Wrong = int64(len(wrong))
				return smp, fmt.Errorf("MS-6: %s", strings.Join(wrong, "; "))
			}
			return smp, nil
		},
		Probes: []claims.Probe{{Name: probeCancelledWhileWaiting, What: "a request gave up while another request's load of its user ran", Min: 20}},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d checks of a user during its 1.5 s load: %d gave up while waiting for the user's lock and failed with their deadline, %d answered from the load; no point check, no wait_timeout fallback counted; %d seeds failed",
				o.Of, o.Tally["cancelled"], o.Tally["answered"], o.Failed)
		},
	})
}
