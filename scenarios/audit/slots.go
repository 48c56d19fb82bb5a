package audit

import "sync"

// slots is the audit's budget of processes at once, shared by the claim
// phase and the mutant phase so that neither leaves a core idle while the
// other has work. The claim phase's longest package (TW) no longer ends
// with one core doing nothing, and the mutants no longer wait for it.
//
// A freed slot goes to the waiter of the lowest priority number first,
// and among waiters of one priority to the earliest. The claim parts
// (priorityClaims), started longest first, take the slots before any
// mutant. So the long ones begin at once and the short mutants fill the
// end.
//
// It is orchestration of real processes, outside every simulation: the
// determinism rules of impl/ and sim/ do not apply, and it uses a mutex.
type slots struct {
	mu      sync.Mutex
	free    int
	waiting [priorities][]chan struct{} // by priority, earliest first
}

const (
	priorityClaims  = iota // a claim part
	priorityMutants        // a mutant's run
	priorities
)

// newSlots is a budget of n processes at once (at least one).
func newSlots(n int) *slots { return &slots{free: max(n, 1)} }

// acquire waits for a slot at priority prio (priorityClaims or
// priorityMutants) and returns the function that gives it back, once.
func (s *slots) acquire(prio int) (release func()) {
	if prio < 0 || prio >= priorities {
		panic("audit: slot priority out of range") // a programming error, not input
	}
	s.mu.Lock()
	if s.free > 0 && !s.anyWaiting() {
		s.free--
		s.mu.Unlock()
		return s.releaseOnce()
	}
	ch := make(chan struct{})
	s.waiting[prio] = append(s.waiting[prio], ch)
	s.mu.Unlock()
	<-ch // release handed this waiter its slot
	return s.releaseOnce()
}

// releaseOnce is release for one holder: a second call would hand out a
// slot that does not exist, so it panics (a programming error).
func (s *slots) releaseOnce() func() {
	released := false // the holder's own: one goroutine calls it
	return func() {
		if released {
			panic("audit: a slot released twice")
		}
		released = true
		s.release()
	}
}

func (s *slots) anyWaiting() bool {
	for _, w := range s.waiting {
		if len(w) > 0 {
			return true
		}
	}
	return false
}

// release hands the slot to the first waiter of the most urgent priority,
// or frees it.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.waiting {
		if len(s.waiting[p]) > 0 {
			ch := s.waiting[p][0]
			s.waiting[p] = s.waiting[p][1:]
			close(ch)
			return
		}
	}
	s.free++
}
