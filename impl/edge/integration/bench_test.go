package integration

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// since returns a function that reports how much the store's metric
// (a per-statement family) has grown since the call, all statements summed.
func since(s *pgstore.Store, metric string) func() int64 {
	sum := func() int64 {
		snap := s.Metrics().Snapshot()
		var n int64
		for _, st := range []string{pgstore.StmtMemberChannels, pgstore.StmtListedOpenChannels, pgstore.StmtActiveMemberships, pgstore.StmtIsActiveMember} {
			n += snap[fmt.Sprintf(`%s{statement="%s"}`, metric, st)]
		}
		return n
	}
	start := sum()
	return func() int64 { return sum() - start }
}

// MS-1 / MS-11 on PostgreSQL: a cold client in 280 channels, checked
// channel by channel. Baseline: one pooled point check per channel (the
// design before the seed). New: one membership read, then snapshot hits.
func BenchmarkColdClient280Channels(b *testing.B) {
	f := pgtest.New(b)
	var g ids
	community := g.id('k')
	var chs []authztest.Channel
	var members []authz.ID
	for range 280 {
		id := g.id('c')
		chs = append(chs, authztest.Channel{ID: id, Community: community, Listed: true})
		members = append(members, id)
	}
	f.AddChannels(chs...)
	users := make([]authz.ID, 64)
	for i := range users {
		users[i] = g.id('u')
		f.AddMembers(users[i], members)
	}
	f.Analyze()
	store := f.Open(pgstore.Config{})
	ctx := b.Context()

	b.Run("baseline=point_checks", func(b *testing.B) {
		n := since(store, pgstore.MetricStatements)
		for i := 0; b.Loop(); i++ {
			u := users[i%len(users)]
			for _, ch := range members {
				c, err := store.Acquire(ctx)
				require.NoError(b, err)
				ok, err := c.IsActiveMember(ctx, community, u, ch)
				c.Release()
				require.NoError(b, err)
				require.True(b, ok)
			}
		}
		b.ReportMetric(float64(n())/float64(b.N), "statements/op")
	})
	b.Run("membership_cache", func(b *testing.B) {
		n := since(store, pgstore.MetricStatements)
		for i := 0; b.Loop(); i++ {
			cache, err := membership.New(rt.Real(), store, membership.Config{}) // cold
			require.NoError(b, err)
			u := users[i%len(users)]
			for _, ch := range members {
				ok, err := cache.IsMember(ctx, community, u, ch)
				require.NoError(b, err)
				require.True(b, ok)
			}
		}
		b.ReportMetric(float64(n())/float64(b.N), "statements/op")
	})
}

// OC-8 on PostgreSQL: new readers of a community with 2,000 listed open
// channels. Baseline: the union per reader (both halves read for every
// reader, as the pre-split per-reader cache did on each miss). New: the
// shared open half, read once per MaxAgeOpen.
func BenchmarkNewReaders2000OpenChannels(b *testing.B) {
	f := pgtest.New(b)
	var g ids
	community := g.id('k')
	var chs []authztest.Channel
	for range 2000 {
		chs = append(chs, authztest.Channel{ID: g.id('c'), Community: community, Open: true, Listed: true})
	}
	f.AddChannels(chs...)
	f.Analyze()
	store := f.Open(pgstore.Config{})
	ctx := b.Context()
	cache, err := accesschannels.New(rt.Real(), store, accesschannels.Config{})
	require.NoError(b, err)

	b.Run("baseline=union_per_reader", func(b *testing.B) {
		r := since(store, pgstore.MetricRows)
		for b.Loop() {
			ids, err := cache.AccessibleUncached(ctx, community, g.id('u'))
			require.NoError(b, err)
			require.Len(b, ids, 2000)
		}
		b.ReportMetric(float64(r())/float64(b.N), "rows/op")
	})
	b.Run("two_halves", func(b *testing.B) {
		r := since(store, pgstore.MetricRows)
		for b.Loop() {
			ids, err := cache.Accessible(ctx, community, g.id('u'))
			require.NoError(b, err)
			require.Len(b, ids, 2000)
		}
		b.ReportMetric(float64(r())/float64(b.N), "rows/op")
	})
}
