package pgstore

import (
	"context"
	"fmt"
)

// Schema creates the two tables the authorization caches read, as the seeds
// describe them, and the indexes that keep every query an index lookup at
// the seeds' sizes (16,385 memberships of one user, 2,000 open channels of
// one community). It is idempotent: every statement is IF NOT EXISTS.
//
// After loading many rows at once, run ANALYZE (Store.Analyze). Without
// planner statistics PostgreSQL may join the 16,384 memberships with a
// quadratic plan, at exactly the sizes MS-4's boundary probes use.
const Schema = `
CREATE TABLE IF NOT EXISTS channels (
	id           uuid        PRIMARY KEY,
	community_id uuid        NOT NULL,
	visibility   text        NOT NULL CHECK (visibility IN ('open', 'private')),
	listed       boolean     NOT NULL DEFAULT true,
	deleted_at   timestamptz NULL
);

-- member_channels, active_memberships and is_active_member filter the
-- joined channel by community among live channels.
CREATE INDEX IF NOT EXISTS channels_live_by_community
	ON channels (community_id) WHERE deleted_at IS NULL;

-- listed_open_channels reads exactly the rows of this partial index.
CREATE INDEX IF NOT EXISTS channels_listed_open_by_community
	ON channels (community_id)
	WHERE visibility = 'open' AND listed AND deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS channel_members (
	channel_id uuid        NOT NULL REFERENCES channels (id),
	user_id    uuid        NOT NULL,
	removed_at timestamptz NULL,
	PRIMARY KEY (channel_id, user_id)
);

-- A user's active memberships, for the full-set load (MS-1, MS-4) and the
-- member half (OC-1). The primary key serves the point check.
CREATE INDEX IF NOT EXISTS channel_members_active_by_user
	ON channel_members (user_id, channel_id) WHERE removed_at IS NULL;
`

// CreateSchema runs Schema on one connection of the store: in Config.Schema
// if that is set (the PostgreSQL schema itself must exist), otherwise in the
// first schema of the server's search_path.
func (s *Store) CreateSchema(ctx context.Context) error {
	c, _, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	// Schema has no parameters, so Exec uses the simple protocol, which
	// accepts several statements in one round trip.
	_, err = c.Exec(ctx, Schema)
	c.Release()
	if err != nil {
		return fmt.Errorf("pgstore: create schema: %w", err)
	}
	return nil
}

// Analyze refreshes the planner statistics of both tables. Run it after
// bulk loading (see Schema): it is what turns the seed's quadratic join at
// 16,384 memberships into a hash join (MS-4).
func (s *Store) Analyze(ctx context.Context) error {
	c, _, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	_, err = c.Exec(ctx, "ANALYZE channels; ANALYZE channel_members")
	c.Release()
	if err != nil {
		return fmt.Errorf("pgstore: analyze: %w", err)
	}
	return nil
}
