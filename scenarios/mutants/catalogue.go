package audit

// The mutant catalogue: every mutant CLAIMS.md names, as an exact edit of one
// production file, with the claim checks that must catch it. Test patterns
// follow the scenario naming convention Test<ID without the dash>_<What>, so
// ^TestOC1_ never matches TestOC10_.
//
// Keep each Old snippet to the line that embodies the decision: when the
// production code changes there, the audit fails with "occurs 0 times" and
// the mutant must be rewritten, never silently dropped.

// Mutants returns the whole catalogue.
func Mutants() []Mutant {
	var all []Mutant
	all = append(all, ocMutants...)
	all = append(all, ocMetricMutants...)
	all = append(all, msMutants...)
	all = append(all, drMutants...)
	all = append(all, twMutants...)
	return all
}

var ocMutants = []Mutant{
	{
		ID: "oc-union-drops-open-half", Claims: []string{"OC-1"},
		What:  "readers with no member channels get nothing, not the open half",
		File:  "impl/accesschannels/cache.go",
		Old:   "\topen, err = c.openHalf(ctx, key{community: community})",
		New:   "\tif len(member) == 0 {\n\t\treturn nil, nil, nil // no memberships: nothing to add\n\t}\n\topen, err = c.openHalf(ctx, key{community: community})",
		Tests: "^TestOC1_",
	},
	{
		ID: "oc-no-age-check", Claims: []string{"OC-2"},
		What:  "the open set is served for its whole 10 s TTL: no OPEN_CHANNELS_MAX_AGE check",
		File:  "impl/accesschannels/open.go",
		Old:   "fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen))",
		New:   "fresh := true",
		Tests: "^TestOC2_",
	},
	{
		ID: "oc-age-from-fill-completion", Claims: []string{"OC-2", "OC-4"},
		What:  "the open set's age counts from when the read finished, not when it began",
		File:  "impl/accesschannels/open.go",
		Old:   "entry := openEntry{ids: ids, readStart: f.readStart}",
		New:   "entry := openEntry{ids: ids, readStart: c.r.Now()}",
		Tests: "^TestOC(2|4)_",
	},
	{
		ID: "oc-never-cache-open-set", Claims: []string{"OC-3"},
		What:  "the open set is never cached (the within-window control must notice)",
		File:  "impl/accesschannels/open.go",
		Old:   "c.opens.Put(k, entry, now.Add(c.cfg.TTL))",
		New:   "_ = entry // never cached",
		Tests: "^TestOC3_",
	},
	{
		ID: "oc-community-invalidation-keeps-member-half", Claims: []string{"OC-5"},
		What:  "a community-wide invalidation forgets to drop the member halves",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "c.members.RemoveIf(func(k key, _ []authz.ID) bool { return k.community == community })",
		New:   "_ = community",
		Tests: "^TestOC5_",
	},
	{
		ID: "oc-membership-invalidation-drops-open-set", Claims: []string{"OC-5"},
		What:  "a membership invalidation also drops the community's open set",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "c.members.Remove(key{community: community, reader: m.UserID})",
		New:   "c.members.Remove(key{community: community, reader: m.UserID})\n\t\tc.opens.Remove(key{community: community})",
		Tests: "^TestOC5_",
	},
	{
		ID: "oc-member-ttl-removed", Claims: []string{"OC-7"},
		What:  "the member half never expires",
		File:  "impl/accesschannels/member.go",
		Old:   "c.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL))",
		New:   "c.members.Put(k, ids, c.r.Now().Add(1<<62))",
		Tests: "^TestOC7_",
	},
	{
		// OC-6 is a documented debt the check must reproduce; a change
		// that removes it (here: the member half is never cached, so no
		// raced fill can re-insert anything) must make the check report
		// that it no longer finds the violation.
		ID: "oc-member-half-uncached", Claims: []string{"OC-6"},
		What:  "the member half is not cached at all, so the documented stale re-insert cannot happen",
		File:  "impl/accesschannels/member.go",
		Old:   "c.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL))",
		New:   "_ = k // never cached",
		Tests: "^TestOC6_",
	},
	{
		ID: "oc-open-set-per-reader", Claims: []string{"OC-8"},
		What:  "the open set is cached per reader (the old design's load)",
		File:  "impl/accesschannels/cache.go",
		Old:   "open, err = c.openHalf(ctx, key{community: community})",
		New:   "open, err = c.openHalf(ctx, key{community: community, reader: reader})",
		Tests: "^TestOC8_",
	},
	{
		// The query still uses the community; only the cache key forgets
		// it, so one community's member set is served for another.
		ID: "oc-keyed-without-community", Claims: []string{"OC-10"},
		What: "the member half is cached under the reader alone, without the community",
		File: "impl/accesschannels/member.go",
		Old: "\tids, st := c.members.Get(k, c.r.Now())\n\tc.mu.Unlock()\n\tif st == wcache.Hit {\n\t\tc.m.memberHits.Inc()\n\t\treturn ids, nil\n\t}\n\tc.m.memberMisses.Inc()\n\n" +
			"\tids, err := c.readMember(ctx, k)\n\tif err != nil {\n\t\treturn nil, err // a failed read caches nothing\n\t}\n\tc.mu.Lock()\n\tc.members.Put(k, ids,",
		New: "\tids, st := c.members.Get(key{reader: k.reader}, c.r.Now())\n\tc.mu.Unlock()\n\tif st == wcache.Hit {\n\t\tc.m.memberHits.Inc()\n\t\treturn ids, nil\n\t}\n\tc.m.memberMisses.Inc()\n\n" +
			"\tids, err := c.readMember(ctx, k)\n\tif err != nil {\n\t\treturn nil, err // a failed read caches nothing\n\t}\n\tc.mu.Lock()\n\tc.members.Put(key{reader: k.reader}, ids,",
		Tests: "^TestOC10_",
	},
}

var ocMetricMutants = []Mutant{
	{
		ID: "oc-expired-counted-as-absent", Claims: []string{"OC-9"},
		What:  "an open-set miss on an aged entry is counted under reason=\"absent\"",
		File:  "impl/accesschannels/open.go",
		Old:   "reason = c.m.openExpired",
		New:   "reason = c.m.openAbsent",
		Tests: "^TestOC9_",
	},
}

var msMutants = []Mutant{
	{
		ID: "ms-per-channel-point-checks", Claims: []string{"MS-1", "MS-11"},
		What:  "every channel check goes to the database, as before the change",
		File:  "impl/membership/cache.go",
		Old:   "return e.contains(channel), nil // MS-1",
		New:   "return c.pointCheck(ctx, k, channel) // MS-1",
		Tests: "^TestMS(1|11)_",
	},
	{
		ID: "ms-expiry-from-load-completion", Claims: []string{"MS-2"},
		What:  "freshness counts from when the load finished, not from connection checkout",
		File:  "impl/membership/load.go",
		Old:   "expiresAt := checkedOutAt.Add(c.cfg.Freshness)",
		New:   "expiresAt := c.r.Now().Add(c.cfg.Freshness)",
		Tests: "^TestMS2_",
	},
	{
		ID: "ms-no-expiry", Claims: []string{"MS-2", "MS-10"},
		What:  "snapshots never expire",
		File:  "impl/membership/load.go",
		Old:   "expiresAt := checkedOutAt.Add(c.cfg.Freshness)",
		New:   "expiresAt := checkedOutAt.Add(1 << 62)",
		Tests: "^TestMS(2|10)_",
	},
	{
		ID: "ms-publish-unconditionally", Claims: []string{"MS-3"},
		What:  "the unfenced load-then-insert of general-purpose caches: an old load repopulates an invalidated entry",
		File:  "impl/membership/load.go",
		Old:   "\tif cur, _ := c.entries.Peek(k, c.r.Now()); cur == e { // MS-3 fence: publish only over our own loading entry\n\t\tc.entries.Put(k, v, v.expiresAt)\n\t}",
		New:   "\t_ = e\n\tc.entries.Put(k, v, v.expiresAt)",
		Tests: "^TestMS3_",
	},
	{
		ID: "ms-fetch-limit-16384", Claims: []string{"MS-4"},
		What:  "the loader fetches 16,384 IDs, so a truncated list is taken as complete",
		File:  "impl/membership/load.go",
		Old:   "c.cfg.MaxSnapshotIDs+1) // MS-4",
		New:   "c.cfg.MaxSnapshotIDs) // MS-4",
		Tests: "^TestMS4_",
	},
	{
		ID: "ms-no-recheck-after-lock", Claims: []string{"MS-5"},
		What:  "waiters load again after acquiring the user lock instead of rechecking",
		File:  "impl/membership/cache.go",
		Old:   "stillLoading := c.current(k) == e",
		New:   "stillLoading := true",
		Tests: "^TestMS5_",
	},
	{
		ID: "ms-timeout-denies", Claims: []string{"MS-6"},
		What:  "a lock-wait timeout answers from nothing (denies) instead of a point check",
		File:  "impl/membership/cache.go",
		Old:   "return c.pointCheck(ctx, k, channel) // MS-6",
		New:   "return false, nil // MS-6",
		Tests: "^TestMS6_",
	},
	{
		ID: "ms-error-cached-as-empty", Claims: []string{"MS-7"},
		What:  "a failed read is cached as an empty snapshot",
		File:  "impl/membership/load.go",
		Old:   "return nil, time.Time{}, fmt.Errorf(\"membership: load: %w\", err)",
		New:   "return nil, checkedOutAt, nil",
		Tests: "^TestMS7_",
	},
	{
		ID: "ms-lock-kept-on-cancel", Claims: []string{"MS-7"},
		What:  "a cancelled or failed load does not release the user lock",
		File:  "impl/membership/load.go",
		Old:   "\t\te.lock.Unlock() // MS-7",
		New:   "\t\t// lock kept // MS-7",
		Tests: "^TestMS7_",
	},
	{
		ID: "ms-weigher-ignores-payload", Claims: []string{"MS-8"},
		What:  "the weigher counts bookkeeping only, not the IDs",
		File:  "impl/membership/entry.go",
		Old:   "w := int64(EntryOverheadBytes) + int64(ids)*authz.IDSize",
		New:   "w := int64(EntryOverheadBytes) + 0*int64(ids)*authz.IDSize",
		Tests: "^TestMS8_",
	},
	{
		ID: "ms-invalidation-by-channel", Claims: []string{"MS-9"},
		What:  "a membership invalidation drops entries holding the channel instead of the user's entry",
		File:  "impl/membership/invalidate.go",
		Old:   "c.entries.Remove(key{m.CommunityID, m.UserID})",
		New:   "c.entries.RemoveIf(func(_ key, e *entry) bool { return e.contains(m.ChannelID) })",
		Tests: "^TestMS9_",
	},
}
