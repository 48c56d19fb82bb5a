package accesschannels_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// benchFixture is the seed's fixture: one community with 2,000 listed open
// channels, and a reader who is a member of 20 private ones. Entries live an
// hour so that every iteration of a hit benchmark is a hit.
func benchFixture(b *testing.B) (*accesschannels.Cache, authz.ID) {
	b.Helper()
	db := authztest.New(rt.Real())
	for i := uint64(1); i <= 2000; i++ {
		if err := db.AddChannel(openCh(ch(i), k1)); err != nil {
			b.Fatal(err)
		}
	}
	for i := uint64(2001); i <= 2020; i++ {
		if err := db.AddChannel(privateCh(ch(i), k1)); err != nil {
			b.Fatal(err)
		}
		if err := db.SetMember(user(1), ch(i), true); err != nil {
			b.Fatal(err)
		}
	}
	c, err := accesschannels.New(rt.Real(), db, accesschannels.Config{MaxAgeOpen: time.Hour, TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Accessible(context.Background(), k1, user(1)); err != nil {
		b.Fatal(err)
	}
	return c, ch(1234)
}

// BenchmarkOpenSetHit: a grant check of an open channel answered from both
// cached halves (member hit, open hit). It is compared with the same question
// answered from the database (the uncached union, 2,020 rows). It is also
// compared with a bare binary search of the open set: the floor, with no lock
// and no counters.
func BenchmarkOpenSetHit(b *testing.B) {
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		c, x := benchFixture(b)
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := c.Granted(ctx, k1, user(1), x); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("uncached-baseline", func(b *testing.B) {
		c, x := benchFixture(b)
		b.ReportAllocs()
		for b.Loop() {
			ids, err := c.AccessibleUncached(ctx, k1, user(1))
			if _, ok := slices.BinarySearchFunc(ids, x, authz.Compare); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("binary-search-floor", func(b *testing.B) {
		c, x := benchFixture(b)
		ids, _ := c.AccessibleUncached(ctx, k1, user(1))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := slices.BinarySearchFunc(ids, x, authz.Compare); !ok {
				b.Fatal(ok)
			}
		}
	})
}

// BenchmarkAccessibleHit: the whole accessible set (2,020 channels) built
// from two cached halves, against reading it uncached from the database.
func BenchmarkAccessibleHit(b *testing.B) {
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		c, _ := benchFixture(b)
		b.ReportAllocs()
		for b.Loop() {
			if ids, err := c.Accessible(ctx, k1, user(1)); len(ids) != 2020 || err != nil {
				b.Fatal(len(ids), err)
			}
		}
	})
	b.Run("uncached-baseline", func(b *testing.B) {
		c, _ := benchFixture(b)
		b.ReportAllocs()
		for b.Loop() {
			if ids, err := c.AccessibleUncached(ctx, k1, user(1)); len(ids) != 2020 || err != nil {
				b.Fatal(len(ids), err)
			}
		}
	})
}
