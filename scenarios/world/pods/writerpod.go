package pods

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// Probes of the writer-pod workload.
const (
	// ProbeWriterReadBeforeOwnDelivery: a read on the writing pod, after
	// its Write returned, answered before the bus delivered the write's
	// invalidation to that pod (or the bus lost it).
	ProbeWriterReadBeforeOwnDelivery = "pods/writer-read-before-own-delivery"
	// ProbeWriterReadDuringPublish: a read on the writing pod began once
	// the write's publish reached the bus and answered before the bus
	// delivered it anywhere.
	ProbeWriterReadDuringPublish = "pods/writer-read-during-publish"
	// ProbeWriterRacedFill: a read of the written key's half was in flight
	// on the writing pod across the commit (it may insert what it read
	// before the change after the local drop: OC-4's and OC-6's raced
	// fills; MS-3's fence keeps a load's out).
	ProbeWriterRacedFill = "pods/writer-raced-fill"
)

// WriterPodResult is what FlyWriterPod found.
type WriterPodResult struct {
	// Reads counts the reads judged; Wrong lists what was wrong (the
	// first few), Wrongs how many. Excused counts the stale answers of an
	// OC lookup that a fill raced across the commit explains (OC-4, OC-6),
	// Raced the judged reads that had such a fill.
	Reads, Wrongs  int
	Excused, Raced int
	Wrong          []string
}

func (r *WriterPodResult) wrongf(format string, a ...any) {
	r.Wrongs++
	if len(r.Wrong) < 5 {
		r.Wrong = append(r.Wrong, fmt.Sprintf(format, a...))
	}
}

// FlyWriterPod checks the production wiring on the writing pod (the
// source texts' write path: commit, then relay.Changed drops locally, then
// publishes). Three pods each subscribe to the bus, their own messages
// included, with every delivery delayed 50–400 ms; in a third of the seeds
// the bus loses every message to one pod, which then learns of its own
// writes only through its own local drop. Admins write through a random
// pod's relay (World.Write), the publish failing, cancelled, slow or clean
// in turn (the Publish cell of Flows, under every FaultKind). Before each
// write the key is read on the writing pod, so its caches hold the old
// answer (not judged: a pod the bus does not reach may be stale within the
// claims' windows); a read on that pod that starts when the publish reaches the bus,
// and one that starts after Write returned, must both answer the tables
// (family OC: Granted and Accessible; MS: IsMember). Meanwhile a
// background reader on every pod reads random keys, a third of the reads
// taking 50–600 ms, so fills are in flight on the writing pod across its
// commits, and half the writes start a slow read of the written key's half
// there just before they commit. Such a fill may insert what it read
// before the change after the local drop: an OC lookup's stale answer is
// then excused (OC-4 bounds a raced open-set fill by the max age, OC-6
// documents the member half's), counted apart and never above the reads
// that had such a fill; MS allows none (MS-3's fence). Writes are settle
// apart (at least the open set's max age and every delivery), so no other
// pod's older change is still served. At the end every pod's relay
// counters must equal the world's account: changed per Changed call,
// publish errors per failed publish, received per decodable delivery,
// malformed per undecodable one (the workload also publishes garbage).
func FlyWriterPod(s *sim.Sim, family Family, settle time.Duration) (WriterPodResult, error) {
	var res WriterPodResult
	r := s.Rand()
	settle = max(settle, 500*time.Millisecond) // every delivery takes at most 400 ms
	const nPods, nChannels, nSubjects, writes = 3, 6, 3, 16
	k := authz.NewID('k', 1)
	tables := authztest.NewTables()
	channels, subjects := make([]authz.ID, nChannels), make([]authz.ID, nSubjects)
	for i := range channels {
		channels[i] = authz.NewID('h', uint64(i+1))
		open := r.IntN(2) == 0
		if err := tables.AddChannel(authztest.Channel{ID: channels[i], Community: k, Open: open, Listed: open}); err != nil {
			return res, err
		}
	}
	for i := range subjects {
		subjects[i] = authz.NewID('u', uint64(i+1))
		for _, ch := range channels {
			if r.IntN(3) == 0 {
				if err := tables.SetMember(subjects[i], ch, true); err != nil {
					return res, err
				}
			}
		}
	}
	deaf := -1 // the pod the bus never reaches
	if r.IntN(3) == 0 {
		deaf = r.IntN(nPods)
	}
	faults := make([]simbus.Faults, nPods)
	for i := range faults {
		faults[i] = simbus.Faults{Delay: simbus.Delay{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond}}
		if i == deaf {
			faults[i].LossProb = 1
		}
	}
	inj := NewInjector(s)
	inj.Otherwise = func(call string) simdb.Fault {
		if call != CallAcquire && r.IntN(3) == 0 {
			return simdb.Fault{Fixed: true, Latency: 50*time.Millisecond + time.Duration(r.Int64N(int64(550*time.Millisecond)))}
		}
		return simdb.Fault{}
	}
	cfg := Config{Pods: nPods, PodFaults: faults}
	cfg.DB.PoolSize = 8
	inj.Wire(&cfg)
	w, err := NewWorld(s, cfg, tables)
	if err != nil {
		return res, err
	}
	s.Note("writer pod: %d pods, deaf pod %d, family %d", nPods, deaf, family)
	bg := context.Background()
	changes := []Change{GrantMember, RemoveMember}
	if family == OC {
		changes = append(changes, MakePrivate, MakeOpen, Unlist, List)
	}
	kinds := []FaultKind{FaultNone, FaultError, FaultCancel, FaultSlow}
	offset := r.IntN(len(kinds))
	changed, pubErrs := make([]int, nPods), make([]int, nPods)
	var garbage int

	// read asks pod about (subject, ch) and returns what the tables say is
	// wrong with the answer, or "".
	read := func(pod *Pod, subject, ch authz.ID) string {
		t := w.DB.State()
		switch family {
		case OC:
			ok, err := pod.OC.Granted(bg, k, subject, ch)
			if want := t.Accessible(k, subject, ch); err != nil || ok != want {
				return fmt.Sprintf("granted %v (%v), the tables say %v", ok, err, want)
			}
			// Only ch is judged: a pod the bus does not reach may serve
			// other channels' older answers within their windows.
			ids, err := pod.OC.Accessible(bg, k, subject)
			if want := t.Accessible(k, subject, ch); err != nil || slices.Contains(ids, ch) != want {
				return fmt.Sprintf("accessible lists it %v (%v), the tables say %v", slices.Contains(ids, ch), err, want)
			}
		default:
			ok, err := pod.MS.IsMember(bg, k, subject, ch)
			if want := t.IsActiveMember(k, subject, ch); err != nil || ok != want {
				return fmt.Sprintf("is-member %v (%v), the tables say %v", ok, err, want)
			}
		}
		return ""
	}

	stop := false
	background := s.NewWaitGroup("background readers")
	for _, p := range w.Pods {
		background.Add(1)
		s.Go(p.Name+" background reader", func() {
			defer background.Done()
			for n := 0; n < 100_000 && !stop; n++ {
				_ = s.Sleep(bg, 20*time.Millisecond+time.Duration(r.Int64N(int64(180*time.Millisecond))))
				_ = read(p, subjects[r.IntN(nSubjects)], channels[r.IntN(nChannels)]) // not judged: concurrent with the writes
			}
		})
	}
	for i := range writes {
		writer := w.Pods[r.IntN(nPods)]
		subject, ch := subjects[r.IntN(nSubjects)], channels[r.IntN(nChannels)]
		change := changes[r.IntN(len(changes))]
		if family == MS || change == GrantMember || change == RemoveMember {
			change = map[bool]Change{true: RemoveMember, false: GrantMember}[w.DB.State().IsActiveMember(k, subject, ch)]
		}
		_ = read(writer, subject, ch) // the caches hold the old answer (maybe stale: not judged)
		kind := kinds[(i+offset)%len(kinds)]
		ctx, cancel := s.WithCancel(bg)
		slow := 100*time.Millisecond + time.Duration(r.Int64N(int64(400*time.Millisecond)))
		// The half the change drops (MS: the user's snapshot), and its reads on the
		// writing pod: running when the write begins, or begun before its
		// publish (after the local drop), a read may have raced the commit.
		half := inflightKey{writer.ID, StmtMemberChannels, subject}
		switch {
		case family == MS:
			half.stmt = StmtActiveMemberships
		case change != GrantMember && change != RemoveMember:
			half = inflightKey{writer.ID, StmtListedOpenChannels, k}
		}
		// Half the time a read of that half starts on the writing pod just
		// before the write, slow: the fill that straddles the commit.
		var racer rt.WaitGroup
		if r.IntN(2) == 0 {
			drop := relay.MembershipChanged(k, subject, ch)
			if half.stmt == StmtListedOpenChannels {
				drop = relay.AccessibleChanged(k)
			}
			writer.Relay.Invalidate(drop)
			inj.Arm(&Arm{Call: stmtCalls[half.stmt], Nth: 1, Kind: FaultSlow, Slow: 200*time.Millisecond + time.Duration(r.Int64N(int64(500*time.Millisecond)))})
			racer = s.NewWaitGroup("racer")
			racer.Add(1)
			s.Go("racer", func() {
				defer racer.Done()
				_ = read(writer, subject, ch) // not judged: it began before the commit
			})
			_ = s.Sleep(bg, time.Duration(1+r.IntN(20))*time.Millisecond)
		}
		running, began := w.flights.activity(half)
		raced := running > 0
		var during string
		var duringDone rt.WaitGroup
		published := w.Bus.Published()
		arm := inj.Arm(&Arm{Call: CallPublish, Nth: 1, Kind: kind, Slow: slow, Cancel: cancel, OnFire: func() {
			if _, b := w.flights.activity(half); b > began {
				raced = true
			}
			duringDone = s.NewWaitGroup("writer-pod reader")
			duringDone.Add(1)
			s.Go("writer-pod reader", func() {
				defer duringDone.Done()
				delivered := totalDelivered(w)
				during = read(writer, subject, ch)
				if during == "" && totalDelivered(w) == delivered {
					s.Probe(ProbeWriterReadDuringPublish)
				}
			})
		}})
		ownBefore := writer.Delivered
		t0 := s.Elapsed()
		werr := w.Write(ctx, writer, 0, change, k, subject, ch)
		took := s.Elapsed() - t0
		inj.Disarm()
		cancel()
		changed[writer.ID]++
		effect := arm.Fired()
		switch kind {
		case FaultNone:
			effect = effect && werr == nil && w.Bus.Published() == published+1
		case FaultError:
			effect = effect && errors.Is(werr, ErrInjected)
		case FaultCancel:
			effect = effect && errors.Is(werr, context.Canceled)
		case FaultSlow:
			effect = effect && werr == nil && took >= slow
		}
		if werr != nil {
			pubErrs[writer.ID]++
		}
		cell := FlowCall{Flow: "relay.Relay.Changed", Call: CallPublish}
		if !effect {
			res.wrongf("write %d on %s, publish %s: fired %v, Write returned %v after %v", i, writer.Name, kind, arm.Fired(), werr, took)
		} else if kind != FaultNone {
			s.Probe(FaultProbe(cell, kind))
		}
		if raced {
			s.Probe(ProbeWriterRacedFill)
		}
		judge := func(when, wrong string) {
			res.Reads++
			if raced {
				res.Raced++
			}
			switch {
			case wrong == "":
			case raced && family == OC:
				res.Excused++
			default:
				res.wrongf("%s %s its write %d (%s %s/%s, publish %s, raced fill %v): %s", writer.Name, when, i, change, Short(subject), Short(ch), kind, raced, wrong)
			}
		}
		after := read(writer, subject, ch)
		judge("right after", after)
		if after == "" && writer.Delivered == ownBefore {
			s.Probe(ProbeWriterReadBeforeOwnDelivery)
		}
		if duringDone != nil {
			_ = duringDone.Wait(bg)
			judge("while publishing", during)
		}
		if racer != nil {
			_ = racer.Wait(bg)
		}
		if r.IntN(4) == 0 {
			garbage++
			if err := w.Bus.Publish(bg, "noise", []byte("{not an invalidation")); err != nil {
				return res, err
			}
		}
		_ = s.Sleep(bg, settle) // past every delivery and every open set read before the write
	}
	stop = true
	_ = background.Wait(bg)
	_ = s.Sleep(bg, settle) // the background readers' last deliveries
	for _, p := range w.Pods {
		got, err := Counters(p.Relay.Metrics())
		if err != nil {
			return res, err
		}
		want := map[string]int64{relay.MetricChanged: int64(changed[p.ID]), relay.MetricPublishErrors: int64(pubErrs[p.ID]),
			relay.MetricReceived: int64(p.Delivered), relay.MetricMalformed: int64(p.Undecodable)}
		if p.ID != deaf && p.Undecodable != garbage {
			res.wrongf("%s: the world counted %d garbage deliveries of %d published on a bus that loses nothing to it", p.Name, p.Undecodable, garbage)
		}
		for _, d := range CounterDiff(map[string]int64{}, got, want) {
			res.wrongf("%s: %s", p.Name, d)
		}
	}
	return res, nil
}

func totalDelivered(w *World) int {
	n := 0
	for _, p := range w.Pods {
		n += p.Delivered + p.Undecodable
	}
	return n
}
