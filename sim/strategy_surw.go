package sim

import (
	"math"
	"math/bits"
)

// SURW is selectively uniform random walk (ASPLOS 2025). Among the steps of a
// run it singles out the selected events, the operations a world's claims
// hang on (Config.Selected), and samples the interleavings of those events
// uniformly: each runnable task is weighted by its estimated count of
// selected events still to come, so a task with three left is three times as
// likely to go next as a task with one. A runnable task whose next step is
// not selected runs first, at once: the order of unselected steps is not
// what the walk samples. A run of such steps is cut at surwEagerMax, so a
// task that polls without a selected event cannot keep the others waiting.
//
// The counts come from a profile (ProfileSURW): one random-walk run that
// counts each task's selected steps, by task name. A task runs on as long as
// it has steps, whatever its estimate: once it is spent, it weighs 1.
func SURW(p *SURWProfile) Strategy { return &surw{profile: p} }

// surwEagerMax bounds a run of unselected steps chosen ahead of the walk.
const surwEagerMax = 64

// SURWProfile is each task name's mean count of selected events.
type SURWProfile struct {
	perName map[string]float64
	mean    float64
}

// Estimate is the profile's count of selected events for a task named name:
// its name's mean, else the mean over every task, at least 1.
func (p *SURWProfile) Estimate(name string) int64 {
	if p == nil {
		return 1
	}
	v, ok := p.perName[name]
	if !ok {
		v = p.mean
	}
	return max(1, int64(math.Ceil(v)))
}

// ProfileSURW returns a random walk that counts every task's selected events,
// and a function that returns their profile once the run is over.
func ProfileSURW() (Strategy, func() *SURWProfile) {
	w := &surw{counting: true}
	return w, w.result
}

type surw struct {
	profile  *SURWProfile
	counting bool
	left     []int64 // by task id: estimated selected events to come
	eager    int     // unselected steps chosen in a row
	// counting: selected steps and tasks by name.
	counts map[string]int64
	tasks  map[string]int64
}

func (w *surw) String() string { return "surw" }

func (w *surw) start(s *Sim) error {
	w.left, w.eager = w.left[:0], 0
	if w.counting {
		w.counts, w.tasks = map[string]int64{}, map[string]int64{}
	}
	if sel := s.cfg.Selected; sel != nil {
		s.objSel = append(s.objSel[:0], sel(AnyObject))
	}
	return nil
}

func (*surw) end(*Sim) {}

func (w *surw) spawned(s *Sim, t *task) {
	if w.counting {
		w.tasks[t.name]++
	}
	w.left = append(w.left, w.profile.Estimate(t.name))
}

// AnyObject is what Config.Selected is asked about the operations on no one
// object: Yield, Sleep, Go, a lock or wait with a cancellable context.
const AnyObject = "*"

// selected says whether t's next step is a selected event. A task's first
// step, on its own object, never is.
func (s *Sim) selected(t *task) bool {
	switch {
	case t.obj < 0:
		return false
	case s.objSel == nil:
		return true
	case int(t.obj) < len(s.objSel):
		return s.objSel[t.obj]
	}
	return true // objSpawn, objWorld: touched, never waited at
}

func (w *surw) pick(s *Sim) int {
	n := uint64(len(s.runnable))
	if w.counting {
		hi, _ := bits.Mul64(s.schedSrc.Uint64(), n)
		if t := s.runnable[hi]; s.selected(t) {
			w.counts[t.name]++
		}
		return int(hi)
	}
	if w.eager < surwEagerMax {
		k := uint64(0)
		for _, t := range s.runnable {
			if !s.selected(t) {
				k++
			}
		}
		if k > 0 {
			w.eager++
			hi, _ := bits.Mul64(s.schedSrc.Uint64(), k)
			for i, t := range s.runnable {
				if !s.selected(t) {
					if hi == 0 {
						return i
					}
					hi--
				}
			}
		}
	}
	w.eager = 0
	var total uint64
	for _, t := range s.runnable {
		total += uint64(max(w.left[t.id], 1))
	}
	r, _ := bits.Mul64(s.schedSrc.Uint64(), total)
	for i, t := range s.runnable {
		wt := uint64(max(w.left[t.id], 1))
		if r < wt {
			if s.selected(t) && w.left[t.id] > 0 {
				w.left[t.id]--
			}
			return i
		}
		r -= wt
	}
	return len(s.runnable) - 1 // unreachable: r < total
}

// result is the profile of a counting run.
func (w *surw) result() *SURWProfile {
	p := &SURWProfile{perName: map[string]float64{}}
	var sum, tasks int64
	for name, k := range w.tasks {
		p.perName[name] = float64(w.counts[name]) / float64(k)
		sum += w.counts[name]
		tasks += k
	}
	if tasks > 0 {
		p.mean = float64(sum) / float64(tasks)
	}
	return p
}
