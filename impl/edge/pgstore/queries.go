package pgstore

// Statement names, used as the statement label of the metrics. They are the
// names authztest uses for the same queries, so counts from the simulated
// and the real database read the same.
const (
	StmtMemberChannels     = "member_channels"
	StmtListedOpenChannels = "listed_open_channels"
	StmtActiveMemberships  = "active_memberships"
	StmtIsActiveMember     = "is_active_member"
)

// The seeds' query rules (see package authz): a membership counts when it is
// not removed and its channel is not deleted; an open channel counts when it
// is open, listed and not deleted. The community filter is on the channel,
// so no query ever returns a channel of another community (OC-10).
const (
	// $1 community, $2 user.
	sqlMemberChannels = `
SELECT m.channel_id
FROM channel_members AS m
JOIN channels AS c ON c.id = m.channel_id
WHERE m.user_id = $2
  AND m.removed_at IS NULL
  AND c.community_id = $1
  AND c.deleted_at IS NULL`

	// $1 community.
	sqlListedOpenChannels = `
SELECT id
FROM channels
WHERE community_id = $1
  AND visibility = 'open'
  AND listed
  AND deleted_at IS NULL`

	// $1 community, $2 user, $3 limit. The membership cache asks for
	// 16,385 rows so that a list of exactly 16,384 is known complete (MS-4).
	// No ORDER BY: the caller sorts, and sorting here would cost the server
	// a sort for nothing.
	sqlActiveMemberships = sqlMemberChannels + `
LIMIT $3`

	// $1 community, $2 user, $3 channel. The authoritative point check; the
	// primary key (channel_id, user_id) finds the row.
	sqlIsActiveMember = `
SELECT EXISTS (
	SELECT 1
	FROM channel_members AS m
	JOIN channels AS c ON c.id = m.channel_id
	WHERE m.channel_id = $3
	  AND m.user_id = $2
	  AND m.removed_at IS NULL
	  AND c.community_id = $1
	  AND c.deleted_at IS NULL
)`
)

// Query returns the SQL text of a statement (one of the Stmt constants),
// with its parameters as $1 community, $2 user, $3 limit or channel: for
// EXPLAIN, review by a DBA, or a test that checks the plan.
func Query(stmt string) (sql string, ok bool) {
	switch stmt {
	case StmtMemberChannels:
		return sqlMemberChannels, true
	case StmtListedOpenChannels:
		return sqlListedOpenChannels, true
	case StmtActiveMemberships:
		return sqlActiveMemberships, true
	case StmtIsActiveMember:
		return sqlIsActiveMember, true
	}
	return "", false
}
