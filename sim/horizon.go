package sim

import "github.com/windtunnel/windtunnel/sim/internal/protocol"

// horizon is the recorded run's Horizon (protocol.Horizon says what for):
// every task's Keep calls so far.
func (w *worldSource) horizon() *protocol.Horizon {
	h := &protocol.Horizon{Tasks: make(map[string]protocol.TaskHorizon, len(w.byTask))}
	for _, st := range w.byTask {
		th := protocol.TaskHorizon{Asked: st.asked, Cur: st.asked[KeepOperation]}
		if st.opSet && st.op == th.Cur {
			th.CurAsked = st.opAsked
		}
		h.Tasks[st.name] = th
	}
	return h
}
