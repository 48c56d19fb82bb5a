package pods

import (
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/sim"
)

// The probes of the interleavings the authorization claims are about
// (issue: reach the rare interleavings). The world sees every statement a
// pod's caches run (through the pod's Store) and every invalidation a pod
// applies (its own writes and what the bus delivers). So it can tell, from
// outside the caches, when an invalidation landed while a read of the same
// key was in flight on that pod, and when a second read of that key began
// while the first was still in flight after such an invalidation.
const (
	// ProbeDropDuringOpenRead: a community-wide invalidation applied on a
	// pod while an open-set read of that community was in flight there.
	ProbeDropDuringOpenRead = "pods/drop-during-open-read"
	// ProbeLookupAfterDropDuringOpenRead: a lookup of that community
	// started after such a drop, while the read was still in flight.
	ProbeReadAfterDropDuringOpenRead = "pods/open-read-after-drop-during-open-read"
	// ProbeDropDuringMemberRead: a membership invalidation of a user
	// applied on a pod while that user's member-half read was in flight.
	ProbeDropDuringMemberRead = "pods/drop-during-member-read"
	// ProbeDropDuringLoad: a membership invalidation of a user applied on a
	// pod while a membership load of that user was in flight there.
	ProbeDropDuringLoad = "pods/drop-during-load"
	// ProbeSecondLoadAfterDrop: a second load of the same user began on
	// that pod while the first was still in flight after the invalidation
	// (the sequence a fence that accepts any loading entry gets wrong).
	ProbeSecondLoadAfterDrop = "pods/second-load-after-drop-during-load"
	// ProbeCommunityDropDuringLoad: a community-wide invalidation that
	// drops membership entries (channel_deleted, accessible_all) applied on
	// a pod while a membership load of some user of that community was in
	// flight there: the load read before the message, so its list may still
	// grant a deleted channel (MS-3's fence must hold for these too).
	ProbeCommunityDropDuringLoad = "pods/community-drop-during-load"
)

// stmtLoadsOfCommunity keys the membership loads in flight by community
// instead of by user (a key of inflight only, no statement of its own).
const stmtLoadsOfCommunity = StmtActiveMemberships + "/community"

// inflightKey is one key's reads of one kind on one pod.
type inflightKey struct {
	pod     int
	stmt    string
	subject authz.ID // the community of an open-set read, else the user
}

// inflight counts a pod's reads in flight per key and remembers the keys
// an invalidation hit meanwhile.
type inflight struct {
	s       *sim.Sim
	running map[inflightKey]int
	dropped map[inflightKey]bool
	// began counts every read begun per key, so that a workload can tell
	// whether one began within an interval.
	began map[inflightKey]int
}

func newInflight(s *sim.Sim) *inflight {
	return &inflight{s: s, running: map[inflightKey]int{}, dropped: map[inflightKey]bool{}, began: map[inflightKey]int{}}
}

// begin notes a read starting; end must follow.
func (f *inflight) begin(k inflightKey) {
	if f.running[k] > 0 && f.dropped[k] {
		switch k.stmt {
		case StmtActiveMemberships:
			f.s.Probe(ProbeSecondLoadAfterDrop)
		case StmtListedOpenChannels:
			f.s.Probe(ProbeReadAfterDropDuringOpenRead)
		}
	}
	f.running[k]++
	f.began[k]++
}

// activity is how many reads of k are running and how many have begun.
func (f *inflight) activity(k inflightKey) (running, began int) { return f.running[k], f.began[k] }

func (f *inflight) end(k inflightKey) {
	f.running[k]--
	if f.running[k] <= 0 {
		delete(f.running, k)
		delete(f.dropped, k)
	}
}

// invalidated notes a message applied on pod.
func (f *inflight) invalidated(pod int, m authz.Message) {
	mark := func(stmt string, subject authz.ID, probe string) {
		k := inflightKey{pod, stmt, subject}
		if f.running[k] > 0 {
			f.dropped[k] = true
			f.s.Probe(probe)
		}
	}
	if m.Kind == authz.KindMembership {
		mark(StmtActiveMemberships, m.UserID, ProbeDropDuringLoad)
		mark(StmtMemberChannels, m.UserID, ProbeDropDuringMemberRead)
		return
	}
	if m.Kind == authz.KindChannelDeleted || m.Kind == authz.KindAccessibleAll {
		mark(stmtLoadsOfCommunity, m.CommunityID, ProbeCommunityDropDuringLoad)
	}
	mark(StmtListedOpenChannels, m.CommunityID, ProbeDropDuringOpenRead)
}
