package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Random small programs for checking reductions against the plain search.
// They keep the reduction's assumption: every shared variable is read and
// written only under the sim lock that guards it.

type progOpKind uint8

const (
	opSection      progOpKind = iota // Lock m; v = 3v + val; Unlock
	opSectionYield                   // Lock m; read; Yield; write; Unlock
	opTry                            // TryLock m; on success v += 7val
	opRRead                          // RLock rw; read w; RUnlock
	opRWrite                         // Lock rw; w = val; Unlock
	opSet                            // Set event
	opWait                           // Wait event (may deadlock)
	opIsSet                          // read IsSet
	opYield                          // Yield
	opSleep                          // Sleep val ms
	opNested                         // Lock m[obj]; Lock m[val]; update both; Unlock; Unlock
	opRand                           // draw from the world stream
	opAfter                          // AfterFunc val ms: a section on m[obj]
	opLockCtx                        // LockContext with a val ms timeout
	opKinds
)

type progOp struct {
	kind progOpKind
	obj  int
	val  int
}

type program struct {
	tasks [][]progOp
}

const progObjs = 2 // mutexes, rwmutexes and events per program

func (p program) String() string {
	var b strings.Builder
	for i, t := range p.tasks {
		fmt.Fprintf(&b, "t%d:", i)
		for _, o := range t {
			fmt.Fprintf(&b, " %d/%d/%d", o.kind, o.obj, o.val)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// progState is what one run of a program leaves behind.
type progState struct {
	vars, rvars [progObjs]int
	logs        [][]int
}

// body builds the program's main; *out points at the state of the current run.
func (p program) body(out **progState) func(s *Sim) {
	return func(s *Sim) {
		st := &progState{logs: make([][]int, len(p.tasks))}
		*out = st
		var ms [progObjs]rt.Mutex
		type rwm interface {
			Lock()
			Unlock()
			RLock()
			RUnlock()
		}
		var rws [progObjs]rwm
		var evs [progObjs]interface {
			Set()
			IsSet() bool
		}
		var waits [progObjs]func()
		for i := range progObjs {
			ms[i] = s.NewMutex(fmt.Sprint("m", i))
			rws[i] = s.NewRWMutex(fmt.Sprint("rw", i))
			e := s.NewEvent(fmt.Sprint("e", i))
			evs[i] = e
			waits[i] = func() { _ = e.Wait(bg) }
		}
		wg := s.NewWaitGroup("tasks")
		wg.Add(len(p.tasks))
		for ti, ops := range p.tasks {
			s.Go(fmt.Sprint("t", ti), func() {
				defer wg.Done()
				log := func(v int) { st.logs[ti] = append(st.logs[ti], v) }
				for _, o := range ops {
					switch o.kind {
					case opSection:
						ms[o.obj].Lock()
						log(st.vars[o.obj])
						st.vars[o.obj] = 3*st.vars[o.obj] + o.val
						ms[o.obj].Unlock()
					case opSectionYield:
						ms[o.obj].Lock()
						v := st.vars[o.obj]
						s.Yield()
						st.vars[o.obj] = v + o.val
						ms[o.obj].Unlock()
					case opTry:
						if ms[o.obj].TryLock() {
							st.vars[o.obj] += 7 * o.val
							ms[o.obj].Unlock()
							log(1)
						} else {
							log(-1)
						}
					case opRRead:
						rws[o.obj].RLock()
						log(st.rvars[o.obj])
						rws[o.obj].RUnlock()
					case opRWrite:
						rws[o.obj].Lock()
						st.rvars[o.obj] = st.rvars[o.obj]*5 + o.val
						rws[o.obj].Unlock()
					case opSet:
						evs[o.obj].Set()
					case opWait:
						waits[o.obj]()
						log(100 + o.obj)
					case opIsSet:
						if evs[o.obj].IsSet() {
							log(200)
						} else {
							log(201)
						}
					case opYield:
						s.Yield()
					case opSleep:
						_ = s.Sleep(bg, time.Duration(o.val)*time.Millisecond)
						log(int(s.Elapsed() / time.Millisecond))
					case opNested:
						a, b := o.obj, o.val%progObjs
						if a == b {
							b = 1 - a
						}
						ms[a].Lock()
						ms[b].Lock()
						st.vars[a] = 2*st.vars[a] + 1
						st.vars[b] = 2*st.vars[b] + st.vars[a]
						ms[b].Unlock()
						ms[a].Unlock()
					case opRand:
						log(1000 + s.Rand().IntN(1000))
					case opAfter:
						s.AfterFunc(time.Duration(o.val)*time.Millisecond, func() {
							ms[o.obj].Lock()
							st.vars[o.obj] = 4*st.vars[o.obj] + 1
							ms[o.obj].Unlock()
						})
					case opLockCtx:
						ctx, cancel := s.WithTimeout(bg, time.Duration(o.val)*time.Millisecond)
						if ms[o.obj].LockContext(ctx) == nil {
							st.vars[o.obj] = 5*st.vars[o.obj] + 2
							ms[o.obj].Unlock()
							log(1)
						} else {
							log(-2)
						}
						cancel()
					}
				}
			})
		}
		_ = wg.Wait(bg)
	}
}

// finalState renders a finished run: the variables, every task's log, and
// for a failed run its kind and who waited where.
func finalState(st *progState, r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v=%v w=%v logs=%v", st.vars, st.rvars, st.logs)
	if f := r.Failure(); f != nil {
		var blocked []string
		for _, bt := range f.Blocked {
			blocked = append(blocked, bt.Name+":"+bt.Wait)
		}
		sort.Strings(blocked)
		fmt.Fprintf(&b, " %s %v", f.Kind, blocked)
	}
	return b.String()
}

// finalStates explores p and returns the set of final states, sorted.
func finalStates(p program, opts ExploreOptions) ([]string, ExploreResult) {
	var cur *progState
	seen := map[string]bool{}
	opts.Visit = func(r Result) { seen[finalState(cur, r)] = true }
	res := Explore(Config{Seed: 1}, opts, p.body(&cur))
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, res
}

func drawProgram(t *rapid.T, kinds []progOpKind, maxTasks, maxOps int) program {
	nt := rapid.IntRange(2, maxTasks).Draw(t, "tasks")
	var p program
	for i := range nt {
		n := rapid.IntRange(1, maxOps).Draw(t, fmt.Sprint("ops", i))
		var ops []progOp
		for j := range n {
			ops = append(ops, progOp{
				kind: rapid.SampledFrom(kinds).Draw(t, fmt.Sprintf("kind%d.%d", i, j)),
				obj:  rapid.IntRange(0, progObjs-1).Draw(t, fmt.Sprintf("obj%d.%d", i, j)),
				val:  rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("val%d.%d", i, j)),
			})
		}
		p.tasks = append(p.tasks, ops)
	}
	return p
}
