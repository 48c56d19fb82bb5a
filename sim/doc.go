// Package sim is windtunnel's deterministic runtime: it implements rt.Runtime
// on coroutines driven by a seeded scheduler and a virtual clock. The
// production code in impl/ thus runs unchanged under controlled, reproducible
// interleavings and instants.
//
// # What a workload uses
//
//   - Run(Config, main) starts a run and returns its Result. Result.Err is
//     nil or a *Failure (its Kind, step, virtual time and blocked tasks).
//   - Config sets the Seed, the Strategy (RandomWalk, PCT, POS, SURW,
//     GoOrder or Replay) and the limits (MaxSteps, MaxTasks, MaxVirtual,
//     HangAfter). It also sets StepDuration, IdleWake and what to keep
//     (TraceTail, TraceOut, RecordDecisions, Record).
//   - *Sim is the rt.Runtime to hand to production code. It offers Go, Now,
//     Sleep, AfterFunc, NewMutex, NewRWMutex, NewEvent, NewWaitGroup,
//     WithCancel, WithDeadline, WithTimeout and Yield.
//   - The world's side of a run: Rand (the seeded world stream), Keep and
//     KeepFor (may this operation or fault happen? KeepOperation,
//     KeepFault; ErrDropped when not), KeepsLeft, Failf, Probe, Note,
//     Tracef, Seed, Elapsed.
//   - What a person reads of a failure: OpBegin and OpEnd around a client
//     operation, Injected for a fault, Blame for what a check found. Their
//     events land in Result.Record (sim/record) when Config.Record is set.
//   - Explore enumerates schedules instead of sampling them (sim/simtest's
//     Prove is the usual way to call it).
//
// For example:
//
//	res := sim.Run(sim.Config{Seed: 42}, func(s *sim.Sim) {
//		mu := s.NewMutex("counter")
//		wg := s.NewWaitGroup("workers")
//		wg.Add(2)
//		for i := range 2 {
//			s.Go(fmt.Sprint("worker-", i), func() {
//				defer wg.Done()
//				if !s.Keep(sim.KeepOperation) {
//					return // a shrinker dropped this worker's operation
//				}
//				op := s.OpBegin("increment")
//				mu.Lock()
//				defer mu.Unlock()
//				s.OpEnd(op, "ok")
//			})
//		}
//		_ = wg.Wait(context.Background())
//	})
//	if res.Err != nil { ... } // a *sim.Failure: seed, step, trace tail
//
// Inside a task, report a violated expectation with s.Failf (never t.Fatal:
// a task runs on its own goroutine). Package sim/simtest runs seeds as go
// test subtests, shrinks a failing one and writes its replay file. The
// protocol it shrinks with (recorded choices, keyed replays) is internal to
// sim/.
//
// # The determinism contract
//
// One uint64 seed feeds one PCG generator per purpose: the schedule's stream
// and the world's stream (Sim.Rand, for workloads and faults). Keeping the
// schedule on its own stream means a replayed or exhaustively explored
// schedule leaves the workload unchanged. Same seed, same binary: the same
// trace, byte for byte, and the same Result.Hash.
//
// Tasks are coroutines (iter.Pull): exactly one runs at a time, and control
// returns to the scheduler only inside rt calls: Lock, Unlock, TryLock,
// Sleep, Go, AfterFunc, Yield, Event.Set/Wait, WaitGroup.Add/Done/Wait. Now is
// not a scheduling point, so code between two rt calls is atomic. Locks yield
// before acquiring and Unlock yields before releasing, so a task arriving at
// a held lock waits, as it would when a real critical section takes time.
//
// Virtual time starts at Epoch and moves only when the scheduler says so:
// when no task can run it jumps to the earliest timer (rounded up to
// IdleWake, if set; optionally also StepDuration per step). Tasks blocked
// with no timer pending is a deadlock: the run fails and names every
// blocked task, what it waits for and the line of user code where it waits.
//
// Everything is bounded: steps, tasks and virtual time. Exceeding a bound
// fails the run with its seed; a run never hangs.
//
// # Cost
//
// A step that switches tasks costs about one coroutine round trip. A step
// the strategy gives to the task that just ran costs no switch at all: the
// decision is made on that task's own coroutine (which changes nothing in
// the schedule). PCT's pick, a mutex's queue of waiters and the timers cost
// O(1) or O(log n) per step however many tasks and timers there are. Yield,
// Lock/Unlock, RLock/RUnlock, Sleep and a timer's firing allocate nothing.
// The file bench_test.go measures this; alloc_test.go holds it.
//
// # Strategies
//
// RandomWalk picks uniformly among runnable tasks; PCT (probabilistic
// concurrency testing) gives depth-d bugs a guaranteed detection probability;
// POS samples partial orders; SURW samples the interleavings of selected
// events uniformly; GoOrder follows Go's own scheduler, with seeded
// switches; Replay follows a recorded decision list. The sim/simtest package runs seeds
// as go test subtests, prints a reproducible failure report and keeps a
// corpus of seeds that once failed.
//
// # Exhaustive exploration
//
// Explore enumerates schedules instead of sampling them. It reruns the
// program from the same seed, depth first over the scheduling decisions,
// covering every schedule with at most MaxPreemptions preemptive context
// switches (CHESS). It optionally skips schedules equivalent to explored ones
// (sleep sets, or dynamic partial-order reduction; BPOR under a bound). It
// reports schedules explored, branches pruned and whether the space was
// exhausted; a failing schedule replays with Replay(result.Decisions). The
// reductions assume the program is data-race-free with respect to sim
// objects; explore.go says exactly what that means.
package sim
