package main

import (
	"fmt"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// key names one read's register: what the read asked, of which relay's
// cache family. OC reads ask "may user see channel in community"; MS reads
// ask "is user an active member of channel in community".
func key(op string, community, user, channel authz.ID) string {
	return fmt.Sprintf("%s|%s|%s|%s", op, community, user, channel)
}

type chanState struct {
	community                    authz.ID
	exists, open, listed, delete bool
}

type memberKey struct{ user, channel authz.ID }

// buildTruth replays the database's commit log (seq order, instants At)
// into the truth of every key the reads asked, by the seeds' query rules:
// a member sees a live channel of its community; a non-member sees it
// when it is also open and listed. A key's value before any commit is
// false: no channel exists before its creating commit.
func buildTruth(log []flight.Commit, reads []read) (checks.Truth, error) {
	type ask struct {
		op                       string
		community, user, channel authz.ID
	}
	byChannel := map[authz.ID][]ask{}
	truth := make(checks.Truth)
	for _, r := range reads {
		k := key(r.Op, r.Community, r.User, r.Channel)
		if _, ok := truth[k]; ok {
			continue
		}
		if err := truth.Declare(k, false); err != nil {
			return nil, err
		}
		byChannel[r.Channel] = append(byChannel[r.Channel], ask{r.Op, r.Community, r.User, r.Channel})
	}
	chans := map[authz.ID]*chanState{}
	members := map[memberKey]bool{}
	value := func(a ask) bool {
		c := chans[a.channel]
		if c == nil || !c.exists || c.delete || c.community != a.community {
			return false
		}
		member := members[memberKey{a.user, a.channel}]
		if a.op == flight.OpMember {
			return member
		}
		return member || (c.open && c.listed)
	}
	last := map[string]bool{}
	for _, c := range log {
		if c.User.IsZero() {
			chans[c.Channel] = &chanState{community: c.Community, exists: true, open: c.Open, listed: c.Listed, delete: c.Deleted}
		} else {
			members[memberKey{c.User, c.Channel}] = c.Active
		}
		for _, a := range byChannel[c.Channel] {
			k := key(a.op, a.community, a.user, a.channel)
			if v := value(a); v != last[k] {
				if err := truth.Commit(k, c.At, v); err != nil {
					return nil, fmt.Errorf("commit log seq %d: %w", c.Seq, err)
				}
				last[k] = v
			}
		}
	}
	return truth, nil
}

// checkReads converts recorded reads to the checker's form.
func checkReads(reads []read) []checks.Read {
	out := make([]checks.Read, len(reads))
	for i, r := range reads {
		out[i] = checks.Read{ID: i, Key: key(r.Op, r.Community, r.User, r.Channel), Invoke: r.Invoke, Return: r.Return, Granted: r.OK}
	}
	return out
}
