// Package pgtest gives each test its own PostgreSQL schema holding the
// pgstore tables. It writes rows the way the relay's write paths would:
// channels created, made private or unlisted, deleted; memberships granted,
// removed and re-added; bulk memberships through COPY, followed by ANALYZE.
//
// The server comes from WINDTUNNEL_PG_URL (see impl/edge/testenv: without it
// the test is skipped, or failed under `make integration`). Each Fixture
// creates a schema with a random name and drops it when the test ends, so
// tests can run in parallel and against a database that holds other data.
//
// Writes use authztest.Channel, the row type of the in-memory database, so a
// test can load the same rows into both and compare answers.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/testenv"
)

// Timeout bounds each fixture statement.
const Timeout = 60 * time.Second

// Fixture is one test's schema and an administrative connection to it. Its
// methods fail the test on error, so call them from the test's goroutine.
type Fixture struct {
	t      testing.TB
	URL    string // WINDTUNNEL_PG_URL
	Schema string // the schema's name
	admin  *pgx.Conn
}

// New creates a fresh schema with pgstore.Schema in it and registers its
// removal with t.Cleanup.
func New(t testing.TB) *Fixture {
	t.Helper()
	u := testenv.PostgresURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	f := &Fixture{t: t, URL: u, Schema: "wt_" + hex.EncodeToString(b[:])}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", testenv.Redact(u), err)
	}
	f.admin = admin
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+f.Schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", f.Schema, err)
		}
		_ = admin.Close(ctx)
	})
	f.Exec("CREATE SCHEMA " + f.Schema)
	f.Exec("SET search_path TO " + f.Schema)
	f.Exec(pgstore.Schema)
	return f
}

// Open returns a pgstore.Store on the fixture's schema (cfg.Schema is set),
// closed when the test ends.
func (f *Fixture) Open(cfg pgstore.Config) *pgstore.Store {
	f.t.Helper()
	cfg.Schema = f.Schema
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	s, err := pgstore.Open(ctx, f.URL, cfg)
	if err != nil {
		f.t.Fatalf("pgtest: open store: %v", err)
	}
	f.t.Cleanup(s.Close)
	return s
}

// Exec runs one statement (or several, without arguments) in the schema.
func (f *Fixture) Exec(sql string, args ...any) int64 {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	tag, err := f.admin.Exec(ctx, sql, args...)
	if err != nil {
		f.t.Fatalf("pgtest: %s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// Conn is the fixture's administrative connection, for queries the
// helpers do not cover. Use it from the test's goroutine only.
func (f *Fixture) Conn() *pgx.Conn { return f.admin }

// UUID converts an ID to a statement argument.
func UUID(id authz.ID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

func visibility(open bool) string {
	if open {
		return "open"
	}
	return "private"
}

// AddChannels inserts channels in one statement (unnest), however many.
func (f *Fixture) AddChannels(chs ...authztest.Channel) {
	f.t.Helper()
	ids := make([]pgtype.UUID, len(chs))
	comms := make([]pgtype.UUID, len(chs))
	vis := make([]string, len(chs))
	listed := make([]bool, len(chs))
	deleted := make([]bool, len(chs))
	for i, c := range chs {
		ids[i], comms[i], vis[i], listed[i], deleted[i] = UUID(c.ID), UUID(c.Community), visibility(c.Open), c.Listed, c.Deleted
	}
	f.Exec(`INSERT INTO channels (id, community_id, visibility, listed, deleted_at)
SELECT id, community_id, visibility, listed, CASE WHEN deleted THEN now() END
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bool[], $5::bool[])
  AS t(id, community_id, visibility, listed, deleted)`, ids, comms, vis, listed, deleted)
}

// SetOpen makes a channel open or private.
func (f *Fixture) SetOpen(channel authz.ID, open bool) {
	f.t.Helper()
	f.mustOne(f.Exec("UPDATE channels SET visibility = $2 WHERE id = $1", UUID(channel), visibility(open)), channel)
}

// SetListed lists or unlists a channel.
func (f *Fixture) SetListed(channel authz.ID, listed bool) {
	f.t.Helper()
	f.mustOne(f.Exec("UPDATE channels SET listed = $2 WHERE id = $1", UUID(channel), listed), channel)
}

// Delete soft-deletes a channel (deleted_at = now()).
func (f *Fixture) Delete(channel authz.ID) {
	f.t.Helper()
	f.mustOne(f.Exec("UPDATE channels SET deleted_at = now() WHERE id = $1", UUID(channel)), channel)
}

// SetMember grants (active) or removes (removed_at = now()) user's
// membership in channel; granting a removed membership re-adds it.
func (f *Fixture) SetMember(user, channel authz.ID, active bool) {
	f.t.Helper()
	f.Exec(`INSERT INTO channel_members (channel_id, user_id, removed_at)
VALUES ($1, $2, CASE WHEN $3::bool THEN NULL ELSE now() END)
ON CONFLICT (channel_id, user_id) DO UPDATE SET removed_at = EXCLUDED.removed_at`,
		UUID(channel), UUID(user), active)
}

// AddMembers bulk-loads active memberships of user in channels with COPY,
// the fast path for the 16,385-membership probes. Run Analyze afterwards.
func (f *Fixture) AddMembers(user authz.ID, channels []authz.ID) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	u := UUID(user)
	n, err := f.admin.CopyFrom(ctx, pgx.Identifier{f.Schema, "channel_members"}, []string{"channel_id", "user_id"},
		pgx.CopyFromSlice(len(channels), func(i int) ([]any, error) { return []any{UUID(channels[i]), u}, nil }))
	if err != nil {
		f.t.Fatalf("pgtest: copy %d memberships: %v", len(channels), err)
	}
	if n != int64(len(channels)) {
		f.t.Fatalf("pgtest: copied %d memberships, want %d", n, len(channels))
	}
}

// Analyze refreshes planner statistics; run it after bulk loading (the
// membership seed's lesson: no statistics, quadratic join).
func (f *Fixture) Analyze() {
	f.t.Helper()
	f.Exec("ANALYZE channels; ANALYZE channel_members")
}

// Truncate empties both tables.
func (f *Fixture) Truncate() {
	f.t.Helper()
	f.Exec("TRUNCATE channel_members, channels")
}

func (f *Fixture) mustOne(n int64, channel authz.ID) {
	f.t.Helper()
	if n != 1 {
		f.t.Fatalf("pgtest: channel %v: %d rows updated, want 1", channel, n)
	}
}
