package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/drainsim"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A proof explores every schedule of a small configuration with at most
// proofPreemptions preemptive context switches (sim.Explore, depth first),
// instead of sampling seeds. Its record is its own line in the audit.
const proofPreemptions = 2

type proofSpec struct {
	id     string
	config string // the configuration, in words
	// reduction: DPOR relies on the program being data-race-free with
	// respect to sim objects; the simulated database draws from the run's
	// random source at every statement, which marks those steps as
	// touching everything, so the reduction never reorders them.
	reduction sim.Reduction
	body      func(s *sim.Sim)
}

// prove runs the exploration, reports the proof record and fails t with a
// replayable schedule when some schedule violates the claim.
func prove(t *testing.T, p proofSpec) sim.ExploreResult {
	t.Helper()
	opts := sim.ExploreOptions{MaxPreemptions: proofPreemptions, Reduction: p.reduction, MaxSchedules: 200_000}
	start := time.Now()
	res := sim.Explore(sim.Config{Seed: 1}, opts, p.body)
	wall := time.Since(start)
	if res.Err != nil {
		t.Fatalf("%s proof: %v", p.id, res.Err)
	}
	t.Logf("%s proof: %s in %v (%.0f schedules/s)", p.id, res, wall.Round(time.Millisecond), float64(res.Runs)/wall.Seconds())
	verdict := claims.Holds
	measured := fmt.Sprintf("every one of %d schedules with ≤ %d preemptions satisfies the claim (%d branches pruned by %s)", res.Explored, proofPreemptions, res.Pruned, p.reduction)
	var witness string
	if res.Failures > 0 {
		verdict = claims.Violated
		measured = fmt.Sprintf("%d of %d schedules violate the claim", res.Failures, res.Explored)
		witness = res.Failure.Error()
		path := filepath.Join(simtest.ArtifactDir(t), "decisions.txt")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			var b strings.Builder
			fmt.Fprintf(&b, "windtunnel decisions v1 seed=0x1 strategy=explore\n")
			for _, d := range res.Decisions {
				fmt.Fprintf(&b, "%d ", d)
			}
			if os.WriteFile(path, []byte(b.String()+"\n"), 0o644) == nil {
				witness += "\nreplay: sim.Run(sim.Config{Seed: 1, Strategy: sim.Replay(decisions)}, body) with the decisions in " + path
			}
		}
		t.Errorf("%s proof: a schedule violates the claim: %v\n%s", p.id, res.Failure, witness)
	} else if !res.Exhausted {
		t.Errorf("%s proof: the space was not exhausted (%s)", p.id, res)
	}
	claims.Report(t, claims.Record{
		ID: p.id, Verdict: verdict, Measured: measured, Bound: "every schedule", Seeds: 1, Witness: witness,
		Proof: &claims.Proof{Config: p.config, MaxPreemptions: proofPreemptions, Reduction: p.reduction.String(),
			Explored: res.Explored, Pruned: res.Pruned, Exhausted: res.Exhausted},
	})
	return res
}

// proofStore is a relay database with no latency model (statements still
// yield before their snapshot), for proofs: every interleaving of the
// statements with the other tasks is a schedule, not a random draw.
func proofStore(s *sim.Sim, t relay.Tables, hook simdb.Hook) relay.Store {
	db, err := simdb.New(s, simdb.Config{PoolSize: 4, Statements: relay.Statements, Hook: hook}, t)
	if err != nil {
		s.Failf("proof setup: %v", err)
	}
	return relay.Store{DB: db, S: s, Reads: &relay.ReadTimes{Max: map[string]int64{}}}
}

// TestMS3_ProofFence: MS-3 on the smallest configuration where the fence
// matters: one pod, a cold check that loads the user's snapshot, an admin
// who removes the membership and invalidates the pod, and a check that
// starts after the invalidation completed. In every schedule with at most 2
// preemptions the three operations are linearizable (porcupine): the old
// load may answer its own request, but never repopulates the invalidated
// entry. The unfenced load-then-insert is found (the audit's mutant).
func TestMS3_ProofFence(t *testing.T) {
	prove(t, proofSpec{
		id:        "MS-3",
		config:    "one pod; a cold membership check, an admin removing the membership and invalidating, a check after the invalidation",
		reduction: sim.ReductionDPOR,
		body:      msFenceProof,
	})
}

// msFenceProof is one run of MS-3's proof configuration.
func msFenceProof(s *sim.Sim) {
	ctx := context.Background()
	k, u, ch := authz.NewID('k', 1), authz.NewID('u', 1), authz.NewID('c', 1)
	tables := relay.NewTables()
	_ = tables.AddChannel(relay.Channel{ID: ch, Community: k})
	_ = tables.SetMember(u, ch, true)
	store := proofStore(s, tables, nil)
	cache, err := membership.New(s, store, membership.Config{})
	if err != nil {
		s.Failf("setup: %v", err)
	}
	// Virtual time does not move in this configuration (no latency),
	// so operations are ordered by a logical clock instead: one task
	// runs at a time, so a counter bumped at every invocation and
	// return gives the real-time order porcupine needs.
	var ops []checks.LinOp
	var clock int64
	tick := func() int64 { clock++; return clock }
	read := func(client int) {
		invoke := tick()
		ok, err := cache.IsMember(ctx, k, u, ch)
		if err != nil {
			s.Failf("MS-3: check failed without faults: %v", err)
		}
		ops = append(ops, checks.LinOp{Key: "u1/c1", Value: ok, Call: invoke, Return: tick(), Client: client})
	}
	invalidated := s.NewEvent("invalidated")
	wg := s.NewWaitGroup("tasks")
	wg.Add(3)
	s.Go("cold-check", func() { defer wg.Done(); read(1) })
	s.Go("admin", func() {
		defer wg.Done()
		invoke := tick()
		if _, err := store.DB.Write(ctx, "remove", func(t *relay.Tables) { _ = t.SetMember(u, ch, false) }); err != nil {
			s.Failf("write: %v", err)
		}
		cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: k, UserID: u, ChannelID: ch})
		ops = append(ops, checks.LinOp{Key: "u1/c1", Write: true, Value: false, Call: invoke, Return: tick(), Client: 2})
		invalidated.Set()
	})
	s.Go("later-check", func() {
		defer wg.Done()
		_ = invalidated.Wait(ctx)
		read(3)
	})
	_ = wg.Wait(ctx)
	if res := checks.Linearizable(ops, map[string]bool{"u1/c1": true}, 0); res.Verdict != porcupine.Ok {
		s.Failf("MS-3: the checks are not linearizable (%s): %+v", res.Verdict, ops)
	}
}

// BenchmarkMS3ProofFence measures the explorer on the fence configuration:
// the whole space of MS-3's proof (every schedule with at most 2
// preemptions, DPOR), with schedules/s against a same-run baseline of
// random-walk runs of the same program.
func BenchmarkMS3ProofFence(b *testing.B) {
	b.Run("baseline=random-walk", func(b *testing.B) {
		for i := range b.N {
			if res := sim.Run(sim.Config{Seed: uint64(i)}, msFenceProof); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
	})
	b.Run("explore/P=2/dpor", func(b *testing.B) {
		var explored int64
		for range b.N {
			res := sim.Explore(sim.Config{Seed: 1}, sim.ExploreOptions{MaxPreemptions: proofPreemptions, Reduction: sim.ReductionDPOR, MaxSchedules: 200_000}, msFenceProof)
			if res.Err != nil || !res.Exhausted || res.Failures > 0 {
				b.Fatalf("the fence proof did not hold: %s", res)
			}
			explored += res.Explored
		}
		b.ReportMetric(float64(explored)/float64(b.N), "schedules")
		b.ReportMetric(float64(explored)/b.Elapsed().Seconds(), "schedules/s")
	})
}

// TestOC4_ProofRacedFill: OC-4 on one pod with reliable invalidation: a cold
// lookup whose open-set read takes 500 ms, an admin who makes the channel
// private and invalidates the pod at the same instant (so the schedule
// decides whether the read's snapshot sees the change), and readers at
// +900 ms and +1.2 s. In every schedule with at most 2 preemptions every
// answer is at most 1 s stale: a fill that raced the drop is inserted
// anyway (no fence) and still expires 1 s after its read began.
func TestOC4_ProofRacedFill(t *testing.T) {
	prove(t, proofSpec{
		id:        "OC-4",
		config:    "one pod; a cold lookup with a 500 ms open-set read racing a revocation and its invalidation; readers at +0.9 s and +1.2 s",
		reduction: sim.ReductionDPOR,
		body: func(s *sim.Sim) {
			ctx := context.Background()
			k, o := authz.NewID('k', 1), authz.NewID('o', 1)
			tables := relay.NewTables()
			_ = tables.AddChannel(relay.Channel{ID: o, Community: k, Open: true, Listed: true})
			store := proofStore(s, tables, func(st simdb.Statement) simdb.Fault {
				if st.Name == relay.StmtListedOpenChannels {
					return simdb.Fault{Fixed: true, Latency: 500 * time.Millisecond}
				}
				return simdb.Fault{}
			})
			cache, err := accesschannels.New(s, store, accesschannels.Config{})
			if err != nil {
				s.Failf("setup: %v", err)
			}
			truth := checks.Truth{}
			var reads []checks.Read
			lookup := func(reader authz.ID, at time.Duration) {
				_ = s.Sleep(ctx, at-s.Elapsed())
				invoke := int64(s.Elapsed())
				ids, err := cache.Accessible(ctx, k, reader)
				if err != nil {
					s.Failf("OC-4: lookup failed without faults: %v", err)
				}
				key := relay.Short(reader)
				if _, ok := truth[key]; !ok {
					_ = truth.Declare(key, true)
				}
				reads = append(reads, checks.Read{ID: len(reads), Key: key, Invoke: invoke, Return: int64(s.Elapsed()), Granted: containsAuthz(ids, o)})
			}
			readers := []authz.ID{authz.NewID('r', 1), authz.NewID('r', 2), authz.NewID('r', 3)}
			for _, r := range readers {
				_ = truth.Declare(relay.Short(r), true)
			}
			wg := s.NewWaitGroup("tasks")
			wg.Add(4)
			s.Go("cold", func() { defer wg.Done(); lookup(readers[0], 0) })
			s.Go("admin", func() {
				defer wg.Done()
				at, err := store.DB.Write(ctx, "make private", func(t *relay.Tables) { _ = t.UpdateChannel(o, func(c *relay.Channel) { c.Open = false }) })
				if err != nil {
					s.Failf("write: %v", err)
				}
				for _, r := range readers {
					_ = truth.Commit(relay.Short(r), int64(at.Sub(sim.Epoch)), false)
				}
				cache.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: k, ChannelID: o})
			})
			s.Go("at-0.9s", func() { defer wg.Done(); lookup(readers[1], 900*time.Millisecond) })
			s.Go("at-1.2s", func() { defer wg.Done(); lookup(readers[2], 1200*time.Millisecond) })
			_ = wg.Wait(ctx)
			rep, err := checks.Staleness(reads, truth)
			if err != nil {
				s.Failf("OC-4: %v", err)
			}
			if !rep.Grant.Holds(time.Second) {
				s.Failf("OC-4: grant-staleness %v exceeds 1s: %s", rep.Grant.MaxStaleness, rep.Grant)
			}
		},
	})
}

func containsAuthz(ids []authz.ID, id authz.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestTW1_ProofSetters: TW-1 on the production handler with two timeout
// setters and cop passes: one task arms c1's inactivity timeout and shortens
// it a second later; the other arms c2's inactivity and active timeouts,
// reports activity on both connections and shortens c2's inactivity timeout
// at once; a third runs passes at +4 s and +6 s. Each shortening happens
// while the wheel holds the longer deadline, the case TW-1's single re-arm
// path exists for. After every operation, and at the end, the handler's own
// audit must find no connection whose wheel deadline is later than its real
// one (late) or that has a live deadline the wheel does not hold (lost),
// and no timeout may fire before its deadline, in every schedule with at
// most 2 preemptions.
func TestTW1_ProofSetters(t *testing.T) {
	prove(t, proofSpec{
		id:        "TW-1",
		config:    "one net thread, two connections; two timeout-setting tasks (arm, shorten, activity) and a task running two cop passes",
		reduction: sim.ReductionDPOR,
		body: func(s *sim.Sim) {
			ctx := context.Background()
			h, err := inactivitycop.NewHandler(s, "proof", inactivitycop.DefaultConfig(), func(to inactivitycop.Timeout) {
				if !to.At.After(to.Deadline) {
					s.Failf("TW-2: %v timeout of conn %d fired at +%v, not after its deadline +%v", to.Kind, to.Conn.ID(), to.At.Sub(sim.Epoch), to.Deadline.Sub(sim.Epoch))
				}
			})
			if err != nil {
				s.Failf("setup: %v", err)
			}
			c1, c2 := h.Open(), h.Open()
			audit := func(after string) {
				h.Do(func(cop *inactivitycop.Cop, now time.Time) {
					a := cop.Audit()
					if len(a.Late) > 0 || len(a.Lost) > 0 {
						s.Failf("TW-1: after %s: %d late and %d lost connection(s) in the wheel", after, len(a.Late), len(a.Lost))
					}
				})
			}
			must := func(err error) {
				if err != nil {
					s.Failf("setter: %v", err)
				}
			}
			wg := s.NewWaitGroup("tasks")
			wg.Add(3)
			s.Go("setter-a", func() {
				defer wg.Done()
				must(h.SetInactivityTimeout(c1, 30*time.Second))
				audit("arming c1's inactivity timeout")
				_ = s.Sleep(ctx, time.Second)
				must(h.SetInactivityTimeout(c1, 5*time.Second))
				audit("shortening c1's inactivity timeout")
			})
			s.Go("setter-b", func() {
				defer wg.Done()
				must(h.SetInactivityTimeout(c2, 40*time.Second))
				audit("arming c2's inactivity timeout")
				must(h.SetActiveTimeout(c2, 20*time.Second))
				audit("arming c2's active timeout")
				h.NetActivity(c1)
				h.NetActivity(c2)
				audit("activity")
				must(h.SetInactivityTimeout(c2, 3*time.Second))
				audit("shortening c2's inactivity timeout")
			})
			s.Go("cop", func() {
				defer wg.Done()
				for _, at := range []time.Duration{4 * time.Second, 6 * time.Second} {
					_ = s.Sleep(ctx, at-s.Elapsed())
					h.Pass()
					audit("a cop pass")
				}
			})
			_ = wg.Wait(ctx)
			audit("the end")
		},
	})
}

// TestDR4_ProofSmallDrains: DR-3 and DR-4 on the smallest configuration
// where they matter: two recorders (one record each, on keys of their own)
// and two drains issued at once on a collector preloaded with one point on
// each of two keys; at each of the drain's yields (after every key and after
// the split) a record is issued from another task and the drain waits for
// it. In every schedule with at most 2 preemptions: the records issued
// between a drain's two swaps complete without waiting for it (DR-3); the
// swap, split and put-back of the two drains never overlap and every point
// is drained exactly once (DR-4); and the history replays against the
// sequential model in write-lock order.
func TestDR4_ProofSmallDrains(t *testing.T) {
	prove(t, proofSpec{
		id:        "DR-4",
		config:    "a collector with 2 keys and 1 preloaded point each; 2 recorders x 1 record; 2 concurrent drains; a record issued and awaited at every drain yield",
		reduction: sim.ReductionDPOR,
		body: func(s *sim.Sim) {
			w, err := drWorld(s, []string{"a", "b"})
			if err != nil {
				s.Failf("setup: %v", err)
			}
			w.Run(drainsim.Plan{Preload: 1, Recorders: 2, RecordsEach: 1, RecorderKeys: [][]string{{"a"}, {"b"}},
				Drainers: 2, DrainsEach: 1, Hook: drainsim.HookPlan{ProbeDrainMutex: true}, FinalDrain: true})
			if err := drainsim.Check(w).Err("DR-3", "DR-4"); err != nil {
				s.Failf("%v", err)
			}
			if _, _, err := drConserved(w); err != nil {
				s.Failf("%v", err)
			}
		},
	})
}
