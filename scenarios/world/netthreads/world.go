package netthreads

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
)

var epoch = sim.Epoch

// since converts an instant to virtual time since the epoch; zero stays 0.
func since(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(epoch)
}

// World is several net threads driven by a random workload under the
// simulator, each mirrored into a full-scan reference cop. New builds it,
// Run flies it to the end (every deadline passed and fired), and Err and
// Stats report what the checks found.
type World struct {
	s       *sim.Sim
	cfg     Config
	Threads []*Thread
	viol    checks.Violations
	stats   Stats
	catchUp []checks.CatchUp
	// workersDone ends the periodic checks: the drain that follows is
	// checked by the callbacks and the final checks.
	workersDone bool
	failFast    []string
	// blameOn is the recorded answer of the operation whose checks run now:
	// the first violation of a claim is blamed on it (record.NoEvent: none).
	blameOn record.EventID
}

// New builds a world on s; nothing runs until Run.
func New(s *sim.Sim, cfg Config) (*World, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &World{s: s, cfg: cfg, blameOn: record.NoEvent}
	for i, tc := range cfg.Threads {
		th, err := newThread(w, i, tc)
		if err != nil {
			return nil, err
		}
		w.Threads = append(w.Threads, th)
	}
	return w, nil
}

// Config returns the world's configuration.
func (w *World) Config() Config { return w.cfg }

func (w *World) now() time.Duration           { return w.s.Elapsed() }
func (w *World) at(d time.Duration) time.Time { return epoch.Add(d) }

func (w *World) violate(claim, format string, a ...any) {
	if !w.viol.Add(claim, checks.At(w.now()), format, a...) {
		return
	}
	if w.blameOn != record.NoEvent && w.viol.Count(claim) == 1 {
		w.s.Blame(w.blameOn, "%s: %s", claim, fmt.Sprintf(format, a...))
	}
	if claim == "harness" || contains(w.failFast, claim) {
		vs := w.viol.Of(claim)
		w.s.Failf("%s", vs[len(vs)-1]) // does not return
	}
}

// FailFast makes the first violation of the given claims (or of the
// harness) end the run at once with that violation as its failure, so a
// broken cop costs one short run instead of a whole corrupted one.
func (w *World) FailFast(claims ...string) { w.failFast = append(w.failFast, claims...) }

// Violations returns the recorded violations of the given claims (all when
// none is given), "harness" ones always included.
func (w *World) Violations(claims ...string) []checks.Violation { return w.viol.Of(claims...) }

// Err returns the first violation of the given claims as an error naming
// the claim, with the count of the others; nil if there is none.
func (w *World) Err(claims ...string) error { return w.viol.Err(claims...) }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// CatchUps returns the restarts' catch-up passes, in order.
func (w *World) CatchUps() []checks.CatchUp { return append([]checks.CatchUp(nil), w.catchUp...) }

// Run flies the world: it starts every thread's cop at tick 0, opens the
// initial connections, runs the workers, the invariant checkers and the
// planned pauses, then drains: every cop is stopped, virtual time moves past
// the last armed deadline, and the restart's catch-up fires everything. It
// returns once the cops are stopped and the final checks are recorded. It
// must run in the simulation's root task.
func (w *World) Run() error {
	s := w.s
	s.Note("%s", w.cfg.String())
	ctx, cancel := s.WithCancel(context.Background())
	defer cancel()
	for _, th := range w.Threads {
		th.start(context.Background())
	}
	workers := s.NewWaitGroup("netthreads/workers")
	for _, th := range w.Threads {
		workers.Add(1)
		s.Go(fmt.Sprintf("net-%d/opener", th.Index), func() {
			defer workers.Done()
			w.sleepUntil(ctx, w.cfg.Plan.NextOp(0))
			for range w.cfg.Conns {
				p := th.drawArm() // drawn first: see drawArm
				if s.Keep(sim.KeepOperation) {
					th.openArmed(p)
				}
			}
			for k := range w.cfg.Workers {
				workers.Add(1)
				s.Go(fmt.Sprintf("net-%d/worker-%d", th.Index, k), func() {
					defer workers.Done()
					th.work(ctx)
				})
			}
		})
		s.Go(fmt.Sprintf("net-%d/checker", th.Index), func() {
			// Checks at random instants while the workload runs; a pause
			// changes nothing, so the checker sleeps through it.
			for ctx.Err() == nil && !w.workersDone {
				_ = s.Sleep(ctx, time.Duration(1+s.Rand().Int64N(int64(w.cfg.CheckGap))))
				if end, frozen := w.cfg.Plan.frozen(w.now()); frozen {
					w.sleepUntil(ctx, end)
				}
				if ctx.Err() == nil && !w.workersDone {
					th.checkAll("periodic check")
				}
			}
		})
	}
	for _, p := range w.cfg.Plan.Pauses {
		w.sleepUntil(ctx, p.Stop)
		// A pause (or clock jump) is a fault a shrinker may drop: the cops
		// then run through it (the workload stays frozen all the same).
		if !s.Keep(sim.KeepFault) {
			continue
		}
		if s.Recording() {
			jump := ""
			if p.Restart%w.cfg.Plan.Tick != 0 {
				jump = ", off the tick grid (a clock jump)"
			}
			s.Injected("every cop stops at +%v and restarts at +%v%s", p.Stop, p.Restart, jump)
		}
		w.pause(ctx, p.Restart, false)
	}
	if err := workers.Wait(context.Background()); err != nil {
		return err
	}
	w.workersDone = true
	w.drain(ctx)
	cancel()
	w.finish()
	return nil
}

// sleepUntil sleeps until virtual instant t (no-op if it has passed).
func (w *World) sleepUntil(ctx context.Context, t time.Duration) {
	if d := t - w.now(); d > 0 {
		_ = w.s.Sleep(ctx, d)
	}
}

// pause stops every cop now, lets time run to restart, starts them again
// and records each thread's catch-up once its continuations are done.
func (w *World) pause(ctx context.Context, restart time.Duration, drain bool) {
	type before struct {
		cursor           int64
		buckets, visited int64
		passes           int64
		armed            int64
	}
	bs := make([]before, len(w.Threads))
	for i, th := range w.Threads {
		th.stop()
		var armed int64 // the reference's count of what the wheel must hold
		for _, c := range th.open {
			if !th.refs[c].Deadline().IsZero() {
				armed++
			}
		}
		tot := th.H.Metrics()
		th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			wt := cop.Wheel().Totals()
			bs[i] = before{cursor: cop.Wheel().Cursor(), buckets: wt.Buckets, visited: wt.Visited, passes: tot.Passes.Value(), armed: armed}
		})
	}
	w.sleepUntil(ctx, restart)
	for _, th := range w.Threads {
		th.start(context.Background())
	}
	w.sleepUntil(ctx, restart+w.cfg.Plan.Quiet)
	for i, th := range w.Threads {
		b := bs[i]
		th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			wt := cop.Wheel().Totals()
			passes := th.H.Metrics().Passes.Value() - b.passes
			cu := checks.CatchUp{
				Thread:      th.Index,
				PauseTicks:  int64(restart/w.cfg.Plan.Tick) - b.cursor + 1,
				Ring:        th.Cfg.Cop.Buckets,
				Examined:    wt.Buckets - b.buckets - (passes - 1), // each continuation re-examines the bucket it resumes
				Passes:      passes,
				Visited:     wt.Visited - b.visited,
				Armed:       b.armed,
				OffGridJump: restart%w.cfg.Plan.Tick != 0,
				At:          checks.At(restart),
			}
			w.catchUp = append(w.catchUp, cu)
			th.hist.CatchUps = append(th.hist.CatchUps, cu)
			if !drain && cu.PauseTicks > int64(cu.Ring) {
				w.s.Probe(ProbeJumpPastRing)
			}
			if !drain && cu.OffGridJump {
				w.s.Probe(ProbeJumpOffGrid)
			}
			if !drain && cu.PauseTicks == int64(cu.Ring)+1 {
				w.s.Probe(ProbeJumpOnePastRing)
			}
			if !drain && cu.PauseTicks == int64(cu.Ring) {
				w.s.Probe(ProbeJumpExactlyRing)
			}
			if !drain && !cu.OffGridJump && cu.PauseTicks >= 2 && cu.PauseTicks <= 4 && cu.PauseTicks < int64(cu.Ring) {
				w.s.Probe(ProbeFewTicksOnGrid)
			}
		})
	}
}

// drain ends the run: once the workers are done it stops every cop outside a
// quiet window, moves past the last armed deadline and restarts them, so the
// catch-up fires every remaining timeout; then it stops them for good.
func (w *World) drain(ctx context.Context) {
	w.sleepUntil(ctx, w.cfg.Plan.NextOp(w.now()))
	var last time.Duration
	for _, th := range w.Threads {
		th.flush(w.now())
		for _, i := range th.open {
			r := th.refs[i] // the later of its two deadlines fires last
			last = max(last, since(r.InactivityDeadline()), since(r.ActiveDeadline()))
		}
	}
	restart := w.cfg.Plan.GridAfter(max(last, w.now()))
	w.pause(ctx, restart, true)
	for _, th := range w.Threads {
		th.stop()
	}
}

// String summarizes the violations, for a failure message.
func (w *World) String() string {
	var b strings.Builder
	for _, v := range w.viol.Of() {
		fmt.Fprintln(&b, v)
	}
	return b.String()
}
