package pods

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// DefaultMaxOps bounds a run's history.
const DefaultMaxOps = 1_000_000

// Config describes a deployment.
type Config struct {
	Pods int
	// DB is the database's pool, latency and faults. NewWorld declares the
	// statements; a PoolSize of 0 gives each pod a pool of its own of
	// simdb's default size, as each relay holds its own store's pool.
	DB simdb.Config
	// Bus carries invalidations; its Faults apply to every pod's
	// subscription unless PodFaults overrides them.
	Bus simbus.Config
	// PodFaults, if set, has one entry per pod: that pod's link faults.
	PodFaults []simbus.Faults
	// OC and MS configure the caches of every pod.
	OC accesschannels.Config
	MS membership.Config
	// MaxOps bounds the history (0: DefaultMaxOps); a run past it fails.
	MaxOps int
}

// World is one simulated deployment.
type World struct {
	S       *sim.Sim
	DB      *simdb.DB[authztest.Tables]
	Store   Store
	Bus     *simbus.Bus[[]byte]
	Pods    []*Pod
	Tracker *Tracker
	History *History
	// Violations holds what the world's own checks found: every channel of
	// another community an OC lookup returned (OC-10).
	Violations checks.Violations
	// Claim, if set, names the claim the run checks: what the world blames
	// in a recorded run (a stale read, the commit that made it stale) is
	// prefixed with it.
	Claim string

	cfg   Config
	class map[Key]Class
	// hook, when set, decides the fault of the statements it claims (ok).
	hook func(simdb.Statement) (simdb.Fault, bool)
	// flights sees each pod's reads in flight, for the probes.
	flights *inflight
	// lastCheck is each pod's latest write-check answer per key.
	lastCheck map[podKey]answer
	seq       int64 // the logical clock of History (ReadOp.InvokeSeq)
	labels    map[Key]string
	ownPools  bool // each pod acquires from its own pool (simdb.Config.Pools)
}

// maxLabels bounds the label cache: a world has a few hundred keys.
const maxLabels = 1 << 12

// label is k's name, as an operation labels itself for sim.KeepFor: every
// read asks on every call, so the names are kept, not formatted each time.
func (w *World) label(k Key) string {
	if l, ok := w.labels[k]; ok {
		return l
	}
	l := k.String()
	if w.labels == nil {
		w.labels = make(map[Key]string)
	}
	if len(w.labels) < maxLabels {
		w.labels[k] = l
	}
	return l
}

// tick advances the logical clock that orders operation ends.
func (w *World) tick() int64 {
	w.seq++
	return w.seq
}

// NewWorld builds the database from tables and starts cfg.Pods pods. It must
// run inside a task of s.
func NewWorld(s *sim.Sim, cfg Config, tables authztest.Tables) (*World, error) {
	if cfg.Pods <= 0 {
		return nil, fmt.Errorf("pods: a world needs at least one pod, got %d", cfg.Pods)
	}
	if cfg.PodFaults != nil && len(cfg.PodFaults) != cfg.Pods {
		return nil, fmt.Errorf("pods: PodFaults has %d entries for %d pods", len(cfg.PodFaults), cfg.Pods)
	}
	if cfg.MaxOps == 0 {
		cfg.MaxOps = DefaultMaxOps
	}
	cfg.DB.Statements = Statements
	ownPools := cfg.DB.PoolSize == 0 && cfg.DB.Pools == 0
	if ownPools {
		// Each production pod holds its own store's pool on the shared
		// server, and waits for its own connections only.
		cfg.DB.PoolSize, cfg.DB.Pools = simdb.DefaultPoolSize, cfg.Pods
	}
	w := &World{S: s, Tracker: NewTracker(), History: NewHistory(cfg.MaxOps), cfg: cfg, class: map[Key]Class{}, flights: newInflight(s), lastCheck: map[podKey]answer{}, ownPools: ownPools}
	w.History.s = s
	// The database's hook is the configuration's, unless a directed
	// workload (Race) takes over particular statements for a while.
	base := cfg.DB.Hook
	cfg.DB.Hook = func(st simdb.Statement) simdb.Fault {
		if w.hook != nil {
			if f, ok := w.hook(st); ok {
				return f
			}
		}
		if base != nil {
			return base(st)
		}
		return simdb.Fault{}
	}
	db, err := simdb.New(s, cfg.DB, tables)
	if err != nil {
		return nil, err
	}
	bus, err := simbus.New[[]byte](s, cfg.Bus)
	if err != nil {
		return nil, err
	}
	w.DB, w.Bus = db, bus
	w.Store = Store{DB: db, S: s, Reads: &ReadTimes{Max: map[string]int64{}}}
	for i := range cfg.Pods {
		p, err := w.newPod(i)
		if err != nil {
			return nil, err
		}
		w.Pods = append(w.Pods, p)
	}
	return w, nil
}

// Track declares a key whose answers are recorded and checked, with the
// class of claim its reads serve.
func (w *World) Track(k Key, c Class) error {
	w.class[k] = c
	return w.Tracker.Track(w.DB.State(), k)
}

// nowNs is the virtual time in ns since sim.Epoch.
func (w *World) nowNs() int64 { return int64(w.S.Elapsed()) }

// ErrSkipped is what a client operation returns when the run drops it
// (sim.Sim.Keep answered false, in a replay a shrinker edited): it was not
// issued, and nothing of it is in the history. A seed's own run never
// drops one.
var ErrSkipped = fmt.Errorf("pods: %w", sim.ErrDropped)

// opBegin records the invocation of a client operation (and counts it);
// the typed parameters keep a run that does not record from formatting or
// boxing anything.
func (w *World) opBegin(what string, pod *Pod, client int, ids ...authz.ID) record.EventID {
	s := w.S
	if !s.Recording() {
		s.OpBegin("")
		return record.NoEvent
	}
	text := fmt.Sprintf("%s client %d: %s", pod.Name, client, what)
	for _, id := range ids {
		if !id.IsZero() {
			text += " " + Short(id)
		}
	}
	return s.OpBegin("%s", text)
}

// opEnd records the answer of the operation begun as op.
func (w *World) opEnd(op record.EventID, err error, answer string) record.EventID {
	if op == record.NoEvent {
		return record.NoEvent
	}
	if err != nil {
		return w.S.OpEnd(op, "error: %v", err)
	}
	return w.S.OpEnd(op, "%s", answer)
}

func grantText(ok bool) string {
	if ok {
		return "granted"
	}
	return "denied"
}

// blame attaches a finding to a recorded event, prefixed with the claim.
func (w *World) blame(id record.EventID, format string, a ...any) {
	if id == record.NoEvent {
		return
	}
	if w.Claim != "" {
		format = w.Claim + ": " + format
	}
	w.S.Blame(id, format, a...)
}

// blameStaleness marks, in a recorded run, the reads a staleness report
// finds past the window checked (within): its witness, the worst read, and
// the commit that made that read's answer false, and every phantom answer
// it kept as an example.
func (w *World) blameStaleness(c checks.ClassReport, grants bool, within time.Duration) {
	if !w.S.Recording() {
		return
	}
	kind := "deny"
	if grants {
		kind = "grant"
	}
	if wt := c.Witness; wt != nil && wt.Staleness > within && wt.Read.ID < len(w.History.Reads) {
		bound := fmt.Sprintf("> %v", within)
		if b := within + time.Nanosecond; within > 0 && b%time.Millisecond == 0 {
			bound = fmt.Sprintf("≥ %v", b) // a half-open window: the bound minus 1 ns was checked
		}
		r := w.History.Reads[wt.Read.ID]
		w.blame(r.Event, "%s-staleness %v %s: read #%d %s", kind, wt.Staleness, bound, wt.Read.ID, r.Key)
		if wt.Ended {
			w.blame(w.Tracker.CommitEvent(wt.Read.Key, wt.EndIndex), "made read #%d stale (%s-staleness %v of %s)", wt.Read.ID, kind, wt.Staleness, r.Key)
		}
	}
	for _, p := range c.PhantomExamples {
		if p.ID < len(w.History.Reads) {
			r := w.History.Reads[p.ID]
			w.blame(r.Event, "phantom %s: read #%d of %s was never true during its request", kind, p.ID, r.Key)
		}
	}
}

// Change is an admin's write.
type Change uint8

const (
	GrantMember Change = iota + 1
	RemoveMember
	MakePrivate
	MakeOpen
	Unlist
	List
	Delete
)

var changeNames = map[Change]string{GrantMember: "grant", RemoveMember: "remove", MakePrivate: "make-private",
	MakeOpen: "make-open", Unlist: "unlist", List: "list", Delete: "delete"}

func (c Change) String() string {
	if n, ok := changeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Change(%d)", uint8(c))
}

// Write performs an admin change through pod, as the relay does: commit the
// write, then the production write path (impl/relay.Relay.Changed) applies
// the invalidation locally on pod and publishes it to the other pods. user is only used by membership changes. The truth of every tracked
// key is updated at the commit instant, and every key whose truth changed is
// recorded as a write operation spanning the write and the local
// invalidation.
//
// The write is a client operation a shrinker may drop (sim.Keep): then it
// returns ErrSkipped and changes nothing.
func (w *World) Write(ctx context.Context, pod *Pod, client int, ch Change, community, user, channel authz.ID) error {
	// Labelled with the keys it changes (a path segment "*" for any), as
	// the checks print keys: a shrinker keeps the writes of the key a
	// failure names.
	label := "*/" + Short(community) + "/*/" + Short(channel)
	if ch == GrantMember || ch == RemoveMember {
		label = "*/" + Short(community) + "/" + Short(user) + "/" + Short(channel)
	}
	if !w.S.KeepFor(sim.KeepOperation, label) {
		return ErrSkipped
	}
	op := w.opBegin(ch.String(), pod, client, community, user, channel)
	start, startSeq := w.nowNs(), w.tick()
	what := fmt.Sprintf("%s %s %s", ch, Short(channel), Short(user))
	var changed []Changed
	var werr error
	commit := record.NoEvent
	_, err := w.DB.Write(ctx, what, func(t *authztest.Tables) {
		switch ch {
		case GrantMember, RemoveMember:
			werr = t.SetMember(user, channel, ch == GrantMember)
		default:
			werr = t.UpdateChannel(channel, func(c *authztest.Channel) {
				switch ch {
				case MakePrivate:
					c.Open = false
				case MakeOpen:
					c.Open = true
				case Unlist:
					c.Listed = false
				case List:
					c.Listed = true
				case Delete:
					c.Deleted = true
				}
			})
		}
		if werr == nil {
			commit = w.DB.CommitEvent()
			changed, werr = w.Tracker.afterWrite(t, int64(w.DB.CommitInstant().Sub(sim.Epoch)), commit)
		}
	})
	if err != nil {
		w.opEnd(op, err, "")
		return err
	}
	if werr != nil {
		w.S.Failf("pods: write %s: %v", what, werr)
	}
	var msg authz.Message
	switch ch {
	case GrantMember, RemoveMember:
		msg = relay.MembershipChanged(community, user, channel)
	case Delete:
		msg = relay.ChannelDeleted(community, channel)
	default:
		msg = relay.VisibilityChanged(community, channel)
	}
	// The production write path: drop locally, then publish.
	perr := pod.Relay.Changed(ctx, msg)
	w.flights.invalidated(pod.ID, msg)
	end, endSeq := w.nowNs(), w.tick()
	ev := w.opEnd(op, perr, "committed")
	for _, c := range changed {
		if w.History.full() {
			w.S.Failf("pods: history limit of %d operations exceeded", w.cfg.MaxOps)
		}
		w.History.Writes = append(w.History.Writes, WriteOp{Key: c.Key, Value: c.Value, Call: start, Return: end, CallSeq: startSeq, ReturnSeq: endSeq, Pod: pod.ID, Event: ev, Commit: commit})
	}
	return perr
}

// Announce applies msg through pod's production write path (relay.Changed:
// drop locally, then publish), as Write does after its commit, for a
// community-wide change the tables keep no row of (accessible_all): no
// tracked key's truth changes, so nothing is recorded in the history. It
// is an operation a shrinker may drop (then ErrSkipped).
func (w *World) Announce(ctx context.Context, pod *Pod, client int, msg authz.Message) error {
	if !w.S.KeepFor(sim.KeepOperation, "*/"+Short(msg.CommunityID)+"/*/*") {
		return ErrSkipped
	}
	op := w.opBegin(string(msg.Kind), pod, client, msg.CommunityID)
	err := pod.Relay.Changed(ctx, msg)
	w.flights.invalidated(pod.ID, msg)
	w.opEnd(op, err, "announced")
	return err
}

func (w *World) record(r ReadOp) {
	if w.History.full() {
		w.S.Failf("pods: history limit of %d operations exceeded", w.cfg.MaxOps)
	}
	w.History.Reads = append(w.History.Reads, r)
}

// Accessible asks pod for reader's accessible channels in community and
// records, for every tracked OC key of that reader, whether it was granted.
// Any returned channel of another community is an OC-10 violation, kept in
// CrossGrants.
//
// Every read (Accessible, Granted, IsMember, Subscribe) is a client
// operation a shrinker may drop (sim.Keep): then it returns ErrSkipped
// without asking the pod and records nothing.
func (w *World) Accessible(ctx context.Context, pod *Pod, client int, community, reader authz.ID) ([]authz.ID, error) {
	if !w.S.KeepFor(sim.KeepOperation, "oc/"+Short(community)+"/"+Short(reader)+"/*") {
		return nil, ErrSkipped
	}
	op := w.opBegin("accessible", pod, client, community, reader)
	invoke, iseq := w.nowNs(), w.tick()
	ids, err := pod.OC.Accessible(ctx, community, reader)
	ret, rseq := w.nowNs(), w.tick()
	if err != nil {
		w.opEnd(op, err, "")
		return nil, err
	}
	answer := ""
	if op != record.NoEvent {
		answer = fmt.Sprintf("%d channels", len(ids))
	}
	ev := w.opEnd(op, nil, answer)
	t := w.DB.State()
	for _, id := range ids {
		if c, ok := t.Channel(id); !ok || c.Community != community {
			if w.Violations.Add("OC-10", checks.Instant(ret), "pod %d granted %s of another community to %s in %s at +%v",
				pod.ID, Short(id), Short(reader), Short(community), nsDur(ret)) {
				w.S.Blame(ev, "OC-10: granted %s of another community", Short(id))
			}
		}
	}
	for _, k := range w.Tracker.keys {
		if k.Family != OC || k.Community != community || k.Subject != reader {
			continue
		}
		w.record(ReadOp{Key: k, Class: w.class[k], Pod: pod.ID, Client: client, Invoke: invoke, Return: ret, InvokeSeq: iseq, ReturnSeq: rseq, Granted: containsID(ids, k.Channel), Event: ev})
	}
	return ids, nil
}

// Granted asks pod whether reader may access one channel, and records it.
func (w *World) Granted(ctx context.Context, pod *Pod, client int, community, reader, channel authz.ID) (bool, error) {
	if !w.S.KeepFor(sim.KeepOperation, w.label(Key{Family: OC, Community: community, Subject: reader, Channel: channel})) {
		return false, ErrSkipped
	}
	op := w.opBegin("granted", pod, client, community, reader, channel)
	invoke, iseq := w.nowNs(), w.tick()
	ok, err := pod.OC.Granted(ctx, community, reader, channel)
	ret, rseq := w.nowNs(), w.tick()
	if err != nil {
		w.opEnd(op, err, "")
		return false, err
	}
	ev := w.opEnd(op, nil, grantText(ok))
	k := Key{Family: OC, Community: community, Subject: reader, Channel: channel}
	if w.Tracker.Tracked(k) {
		w.record(ReadOp{Key: k, Class: w.class[k], Pod: pod.ID, Client: client, Invoke: invoke, Return: ret, InvokeSeq: iseq, ReturnSeq: rseq, Granted: ok, Event: ev})
	}
	return ok, nil
}

// IsMember asks pod's membership cache about one channel, and records it.
func (w *World) IsMember(ctx context.Context, pod *Pod, client int, community, user, channel authz.ID) (bool, error) {
	if !w.S.KeepFor(sim.KeepOperation, w.label(Key{Family: MS, Community: community, Subject: user, Channel: channel})) {
		return false, ErrSkipped
	}
	op := w.opBegin("is-member", pod, client, community, user, channel)
	invoke, iseq := w.nowNs(), w.tick()
	ok, err := pod.MS.IsMember(ctx, community, user, channel)
	ret, rseq := w.nowNs(), w.tick()
	if err != nil {
		w.opEnd(op, err, "")
		return false, err
	}
	ev := w.opEnd(op, nil, grantText(ok))
	k := Key{Family: MS, Community: community, Subject: user, Channel: channel}
	if w.Tracker.Tracked(k) {
		w.lastCheck[podKey{pod.ID, k}] = map[bool]answer{true: granted, false: denied}[ok]
		w.record(ReadOp{Key: k, Class: Membership, Pod: pod.ID, Client: client, Invoke: invoke, Return: ret, InvokeSeq: iseq, ReturnSeq: rseq, Granted: ok, Event: ev})
	}
	return ok, nil
}

// Subscribe asks pod's membership cache to confirm a subscription
// (membership.Cache.Subscribe), and records it as a Subscription answer.
// A grant after the pod's latest write check of the key denied it is a
// subscription that confirmed a membership the snapshot lacked.
func (w *World) Subscribe(ctx context.Context, pod *Pod, client int, community, user, channel authz.ID) (bool, error) {
	if !w.S.KeepFor(sim.KeepOperation, w.label(Key{Family: MS, Community: community, Subject: user, Channel: channel})) {
		return false, ErrSkipped
	}
	op := w.opBegin("subscribe", pod, client, community, user, channel)
	invoke, iseq := w.nowNs(), w.tick()
	ok, err := pod.MS.Subscribe(ctx, community, user, channel)
	ret, rseq := w.nowNs(), w.tick()
	if err != nil {
		w.opEnd(op, err, "")
		return false, err
	}
	ev := w.opEnd(op, nil, grantText(ok))
	k := Key{Family: MS, Community: community, Subject: user, Channel: channel}
	if w.Tracker.Tracked(k) {
		if ok && w.lastCheck[podKey{pod.ID, k}] == denied {
			w.S.Probe(ProbeSubscriptionConfirmedMember)
		}
		w.record(ReadOp{Key: k, Class: Subscription, Pod: pod.ID, Client: client, Invoke: invoke, Return: ret, InvokeSeq: iseq, ReturnSeq: rseq, Granted: ok, Event: ev})
	}
	return ok, nil
}

// ProbeSubscriptionConfirmedMember: a subscription was granted a
// membership that the pod's latest write check of it had denied.
const ProbeSubscriptionConfirmedMember = "pods/subscription-confirmed-a-missing-membership"

type podKey struct {
	pod int
	key Key
}

type answer uint8

const (
	unknown answer = iota
	granted
	denied
)

func containsID(ids []authz.ID, id authz.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
