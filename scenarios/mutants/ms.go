package mutants

// msMutants are the membership-snapshot mutants (MS-*), in impl/membership;
// their checks are in scenarios/ms.
var msMutants = []Mutant{
	{
		ID: "ms-per-channel-point-checks", Claims: []string{"MS-1", "MS-11"},
		What:  "every channel check goes to the database, as before the change",
		File:  "impl/membership/cache.go",
		Old:   "return e.contains(channel), nil // MS-1",
		New:   "return c.pointCheck(ctx, k, channel) // MS-1",
		Tests: "^TestMS(1|11)_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-expiry-from-load-completion", Claims: []string{"MS-2"},
		What:  "freshness counts from when the load finished, not from connection checkout",
		File:  "impl/membership/load.go",
		Old:   "expiresAt := checkedOutAt.Add(c.cfg.Freshness)",
		New:   "expiresAt := c.r.Now().Add(c.cfg.Freshness)",
		Tests: "^TestMS2_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-no-expiry", Claims: []string{"MS-2", "MS-10"},
		What:  "snapshots never expire",
		File:  "impl/membership/load.go",
		Old:   "expiresAt := checkedOutAt.Add(c.cfg.Freshness)",
		New:   "expiresAt := checkedOutAt.Add(1 << 62)",
		Tests: "^TestMS(2|10)_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-publish-unconditionally", Claims: []string{"MS-3"},
		What:  "the unfenced load-then-insert of general-purpose caches: an old load repopulates an invalidated entry",
		File:  "impl/membership/load.go",
		Old:   "\tif cur, _ := c.entries.Peek(k, c.r.Now()); cur == e { // MS-3 fence: publish only over our own loading entry\n\t\tc.entries.Put(k, v, v.expiresAt)\n\t}",
		New:   "\t_ = e\n\tc.entries.Put(k, v, v.expiresAt)",
		Tests: "^TestMS3_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Found by a mutation hunt: MS-3's world had no community-wide
		// invalidation land during a load (its admins changed memberships
		// only). Its churn now deletes channels and announces
		// accessible_all while loads run, and a proof deletes the channel.
		ID: "ms-community-inval-spares-loading", Claims: []string{"MS-3"},
		What:  "community-wide invalidations (accessible_all, channel_deleted, malformed ones with a community) skip loading entries: a load that read before a channel was deleted publishes a list still granting it",
		File:  "impl/membership/invalidate.go",
		Old:   "\tc.entries.RemoveIf(func(k key, _ *entry) bool { return k.community == community })",
		New:   "\tc.entries.RemoveIf(func(k key, e *entry) bool { return k.community == community && e.kind != Loading })",
		Tests: "^TestMS3_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Found by a mutation hunt: no check shrank a user across the cap,
		// so a marker outliving the freshness bound went unseen.
		ID: "ms-marker-never-expires", Claims: []string{"MS-4"},
		What:  "a PointChecks marker never expires: a user who falls below the snapshot cap stays on point checks, each counted oversize",
		File:  "impl/membership/load.go",
		Old:   "return &entry{kind: PointChecks, checkedOutAt: checkedOutAt, expiresAt: expiresAt}",
		New:   "return &entry{kind: PointChecks, checkedOutAt: checkedOutAt, expiresAt: checkedOutAt.Add(1 << 62)}",
		Tests: "^TestMS4_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-fetch-limit-16384", Claims: []string{"MS-4"},
		What:  "the loader fetches 16,384 IDs, so a truncated list is taken as complete",
		File:  "impl/membership/load.go",
		Old:   "c.cfg.MaxSnapshotIDs+1) // MS-4",
		New:   "c.cfg.MaxSnapshotIDs) // MS-4",
		Tests: "^TestMS4_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-no-recheck-after-lock", Claims: []string{"MS-5"},
		What:  "waiters load again after acquiring the user lock instead of rechecking",
		File:  "impl/membership/cache.go",
		Old:   "stillLoading := c.current(k) == e",
		New:   "stillLoading := true",
		Tests: "^TestMS5_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-timeout-denies", Claims: []string{"MS-6"},
		What:  "a lock-wait timeout answers from nothing (denies) instead of a point check",
		File:  "impl/membership/cache.go",
		Old:   "return c.pointCheck(ctx, k, channel) // MS-6",
		New:   "return false, nil // MS-6",
		Tests: "^TestMS6_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-wait-rounds-exhausted-denies", Claims: []string{"MS-6"},
		What:  "a check whose wait rounds ran out (each round found another request's load of the user) answers from nothing (denies) instead of a point check",
		File:  "impl/membership/cache.go",
		Old:   "return c.waitTimeoutCheck(ctx, k, channel) // MS-6: the rounds ran out",
		New:   "return false, nil // MS-6: the rounds ran out",
		Tests: "^TestMS6_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-error-cached-as-empty", Claims: []string{"MS-7"},
		What:  "a failed read is cached as an empty snapshot",
		File:  "impl/membership/load.go",
		Old:   "return nil, time.Time{}, fmt.Errorf(\"membership: load: %w\", err)",
		New:   "return nil, checkedOutAt, nil",
		Tests: "^TestMS7_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-lock-kept-on-cancel", Claims: []string{"MS-7"},
		What:  "a cancelled or failed load does not release the user lock",
		File:  "impl/membership/load.go",
		Old:   "\t\te.lock.Unlock() // MS-7",
		New:   "\t\t// lock kept // MS-7",
		Tests: "^TestMS7_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-weigher-ignores-payload", Claims: []string{"MS-8"},
		What:  "the weigher counts bookkeeping only, not the IDs",
		File:  "impl/membership/entry.go",
		Old:   "w := int64(EntryOverheadBytes) + int64(ids)*authz.IDSize",
		New:   "w := int64(EntryOverheadBytes) + 0*int64(ids)*authz.IDSize",
		Tests: "^TestMS8_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-invalidation-by-channel", Claims: []string{"MS-9"},
		What:  "a membership invalidation drops entries holding the channel instead of the user's entry",
		File:  "impl/membership/invalidate.go",
		Old:   "c.entries.Remove(key{m.CommunityID, m.UserID})",
		New:   "c.entries.RemoveIf(func(_ key, e *entry) bool { return e.contains(m.ChannelID) })",
		Tests: "^TestMS9_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Survived while MS-9 warmed its subjects in one fixed order,
		// ending with a user no community-wide message drops: the most
		// recently used entry was never a target. The warm order is now
		// drawn from the seed.
		ID: "wcache-removeif-skips-mru-ms", Claims: []string{"MS-9"},
		What:  "RemoveIf starts its walk after the most recently used entry: a community-wide invalidation leaves that entry in place",
		File:  "impl/wcache/wcache.go",
		Old:   "for n := c.sentinel.next; n != &c.sentinel; {",
		New:   "for n := c.sentinel.next.next; n != &c.sentinel; {",
		Tests: "^TestMS9_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Issue 36, kind 1: no check failed the confirming point check.
		ID: "ms-confirm-error-denies", Claims: []string{"MS-7"},
		What:  "a subscription whose confirming point check fails is denied, the database's error swallowed",
		File:  "impl/membership/subscribe.go",
		Old:   "\tif err != nil {\n\t\treturn false, err\n\t}\n\tif member {",
		New:   "\tif err != nil {\n\t\treturn false, nil // the database is down: deny\n\t}\n\tif member {",
		Tests: "^TestMS7_EveryFlowUnderFaults$",
		Pkg:   "./scenarios/ms",
	},
	{
		// Issue 36, kind 1: the simulated pool could not fail a checkout
		// with an error of its own until the fault table flew every call.
		ID: "ms-pool-error-reads-as-no-memberships", Claims: []string{"MS-7"},
		What:  "a checkout for a load that fails (not by the caller's context) loads an empty membership list, published as a snapshot",
		File:  "impl/membership/load.go",
		Old:   "\tconn, err := c.pool.Acquire(ctx)\n\tif err != nil {\n\t\treturn nil, time.Time{}, fmt.Errorf(\"membership: load checkout: %w\", err)\n\t}",
		New:   "\tconn, err := c.pool.Acquire(ctx)\n\tif err != nil && ctx.Err() == nil {\n\t\treturn nil, c.r.Now(), nil // the pool is exhausted: load an empty list\n\t}\n\tif err != nil {\n\t\treturn nil, time.Time{}, fmt.Errorf(\"membership: load checkout: %w\", err)\n\t}",
		Tests: "^TestMS7_EveryFlowUnderFaults$",
		Pkg:   "./scenarios/ms",
	},
	{
		// Issue 36, kind 3: no check read on the writing pod while its
		// publish was in progress.
		ID: "relay-changed-publishes-first", Claims: []string{"MS-9"},
		What:  "Changed publishes, then drops locally: the writing pod's own reads during a slow publish are stale",
		File:  "impl/relay/relay.go",
		Old:   "\tr.Invalidate(m)\n\tr.changed.Inc()\n\tif r.pub == nil {\n\t\treturn nil\n\t}\n\tif err := r.pub.Publish(ctx, m); err != nil {",
		New:   "\tr.changed.Inc()\n\tif r.pub == nil {\n\t\tr.Invalidate(m)\n\t\treturn nil\n\t}\n\terr := r.pub.Publish(ctx, m)\n\tr.Invalidate(m)\n\tif err != nil {",
		Tests: "^TestMS9_WriterPodReadsItsOwnWrite$",
		Pkg:   "./scenarios/ms",
	},
}

// msSites are where impl/membership (and the wcache under it) encodes the
// MS bounds.
var msSites = []Site{
	{Claim: "MS-2", Bound: "freshness", File: "impl/membership/config.go",
		Old: "DefaultFreshness = 10 * time.Second", Literal: "10 * time.Second", Tests: "^TestMS2_", Pkg: "./scenarios/ms"},
	{Claim: "MS-2", Bound: "freshness", File: "impl/wcache/wcache.go",
		Old: "\tif !now.Before(n.expiresAt) {\n\t\tc.unlink(n)", Lenient: "\tif now.After(n.expiresAt) {\n\t\tc.unlink(n)", Tests: "^TestMS2_", Pkg: "./scenarios/ms"},
	{Claim: "MS-10", Bound: "freshness", File: "impl/membership/config.go",
		Old: "DefaultFreshness = 10 * time.Second", Literal: "10 * time.Second", Tests: "^TestMS10_", Pkg: "./scenarios/ms"},
	{Claim: "MS-4", Bound: "snapshot ids", File: "impl/membership/config.go",
		Old: "DefaultMaxSnapshotIDs = 16384", Literal: "16384", Tests: "^TestMS4_", Pkg: "./scenarios/ms"},
	{Claim: "MS-4", Bound: "fetch ids", File: "impl/membership/load.go",
		Old: "c.cfg.MaxSnapshotIDs+1) // MS-4", Literal: "c.cfg.MaxSnapshotIDs+1", Tests: "^TestMS4_", Pkg: "./scenarios/ms"},
	{Claim: "MS-8", Bound: "budget", File: "impl/membership/config.go",
		Old: "DefaultBudgetBytes = 64 << 20", Literal: "64 << 20", Tests: "^TestMS8_", Pkg: "./scenarios/ms"},
}

// msRareMutants are wrong only in an interleaving a random workload seldom
// produces: a second load of the same user that starts after an
// invalidation while the first is still in flight (the ABA on the loading
// entry).
var msRareMutants = []Mutant{
	{
		ID: "ms-fence-accepts-any-loading-entry", Claims: []string{"MS-3"},
		What:  "the fence publishes over any loading entry, not only the loader's own: an old load overwrites a newer load's entry after an invalidation",
		File:  "impl/membership/load.go",
		Old:   "if cur, _ := c.entries.Peek(k, c.r.Now()); cur == e { // MS-3 fence: publish only over our own loading entry",
		New:   "if cur, _ := c.entries.Peek(k, c.r.Now()); cur != nil && cur.kind == Loading { // MS-3 fence: publish only over our own loading entry",
		Tests: "^TestMS3_",
		Pkg:   "./scenarios/ms",
	},
}

// msNewMutants serve the claims added with the rest of the source text
// (MS-12, MS-13).
var msNewMutants = []Mutant{
	{
		ID: "ms-subscription-trusts-cached-denial", Claims: []string{"MS-12"},
		What:  "an explicit subscription trusts the cached snapshot's denial instead of confirming it against the database",
		File:  "impl/membership/subscribe.go",
		Old:   "\tif err != nil || ok {\n\t\treturn ok, err\n\t}\n\tc.m.confirms.Inc()",
		New:   "\treturn ok, err // the snapshot's denial is trusted\n\tc.m.confirms.Inc()",
		Tests: "^TestMS12_",
		Pkg:   "./scenarios/ms",
	},
	{
		ID: "ms-hit-builds-wait-context", Claims: []string{"MS-13"},
		What:  "every check builds its lock-wait context up front, so a hit allocates",
		File:  "impl/membership/cache.go",
		Old:   "\tvar waitCtx context.Context\n\tvar stopWait context.CancelFunc\n",
		New:   "\twaitCtx, stopWait := c.r.WithTimeout(ctx, c.cfg.LockWait)\n",
		Tests: "^TestMS13_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Survived until TestMS6_CancelledWaitIsNoTimeout: MS-7's world
		// cancels waiting requests but never compares the counter.
		ID: "ms-cancelled-wait-counted-as-timeout", Claims: []string{"MS-6"},
		What:  "a request whose own context ends while it waits for the user's lock is taken for a lock-wait timeout: a wait_timeout fallback is counted and a point check tried",
		File:  "impl/membership/cache.go",
		Old:   "\t\t\tif cerr := ctx.Err(); cerr != nil {\n\t\t\t\treturn false, cerr // the request itself ended\n\t\t\t}\n",
		New:   "",
		Tests: "^TestMS6_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Survived while MS-8 loaded snapshots of one size, each load
		// evicting at most one entry.
		ID: "ms-budget-evicts-one-per-insert", Claims: []string{"MS-8"},
		What:  "an insert evicts at most one entry, however much it weighs: one large load leaves the cache over its budget",
		File:  "impl/wcache/wcache.go",
		Old:   "\tfor c.weight > c.budget {\n",
		New:   "\tif c.weight > c.budget {\n",
		Tests: "^TestMS8_",
		Pkg:   "./scenarios/ms",
	},
	{
		// Found by a mutation hunt: the MS metric checks read the
		// registry's own snapshot; they now read the exposition through the
		// Prometheus parser (series.Scrape).
		ID: "stats-vec-label-unquoted-ms", Claims: []string{"MS-4", "MS-6"},
		What:  "the registry prints label values unquoted ({reason=oversize}): no Prometheus scraper parses the membership cache's fallbacks series",
		File:  "impl/stats/stats.go",
		Old:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%q} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		New:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%s} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		Tests: "^TestMS(4|6)_",
		Pkg:   "./scenarios/ms",
	},
	// Data races no simulated check can see (mutants.Mutant.Race): the
	// lock each leaves out holds no scheduling point.
	{
		ID: "ms-publish-without-cache-lock", Claims: []string{"MS-3"},
		What:  "the fence's peek and put run without the cache's lock: a data race with every lookup and invalidation",
		File:  "impl/membership/load.go",
		Old:   "\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tif cur, _ := c.entries.Peek(k, c.r.Now()); cur == e {",
		New:   "\tif cur, _ := c.entries.Peek(k, c.r.Now()); cur == e {",
		Tests: "^TestMS3_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/ms",
		Race:  true,
	},
	{
		ID: "ms-recheck-without-cache-lock", Claims: []string{"MS-5"},
		What:  "a waiter rechecks the user's entry without the cache's lock: a data race with the loader's publish",
		File:  "impl/membership/cache.go",
		Old:   "\t\tc.mu.Lock()\n\t\tstillLoading := c.current(k) == e // MS-5: recheck after acquiring the lock\n\t\tc.mu.Unlock()",
		New:   "\t\tstillLoading := c.current(k) == e // MS-5: recheck after acquiring the lock",
		Tests: "^TestMS3_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/ms",
		Race:  true,
	},
}
