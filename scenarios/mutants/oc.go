package mutants

// ocMutants are the accessible-channels mutants (OC-*), in
// impl/accesschannels; their checks are in scenarios/oc.
var ocMutants = []Mutant{
	{
		ID: "oc-union-drops-open-half", Claims: []string{"OC-1"},
		What:  "readers with no member channels get nothing, not the open half",
		File:  "impl/accesschannels/cache.go",
		Old:   "\topen, err = c.openHalf(ctx, key{community: community})",
		New:   "\tif len(member) == 0 {\n\t\treturn nil, nil, nil // no memberships: nothing to add\n\t}\n\topen, err = c.openHalf(ctx, key{community: community})",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-no-age-check", Claims: []string{"OC-2"},
		What:  "the open set is served for its whole 10 s TTL: no OPEN_CHANNELS_MAX_AGE check",
		File:  "impl/accesschannels/open.go",
		Old:   "fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen))",
		New:   "fresh := true",
		Tests: "^TestOC2_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-slow-read-joined-late", Claims: []string{"OC-2"},
		What:  "a reader joins an open-set read in flight however old it is: behind a read slower than the window, its grant is as stale as it asked late",
		File:  "impl/accesschannels/open.go",
		Old:   "if f == nil || !now.Before(f.readStart.Add(c.cfg.MaxAgeOpen)) {",
		New:   "if f == nil {",
		Tests: "^TestOC2_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-age-from-fill-completion", Claims: []string{"OC-2", "OC-4"},
		What:  "the open set's age counts from when the read finished, not when it began",
		File:  "impl/accesschannels/open.go",
		Old:   "entry := openEntry{ids: ids, readStart: f.readStart}",
		New:   "entry := openEntry{ids: ids, readStart: c.r.Now()}",
		Tests: "^TestOC(2|4)_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-never-cache-open-set", Claims: []string{"OC-3"},
		What:  "the open set is never cached (the within-window control must notice)",
		File:  "impl/accesschannels/open.go",
		Old:   "c.opens.Put(k, entry, now.Add(c.cfg.TTL))",
		New:   "_ = entry // never cached",
		Tests: "^TestOC3_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-community-invalidation-keeps-member-half", Claims: []string{"OC-5"},
		What:  "a community-wide invalidation forgets to drop the member halves",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "c.members.RemoveIf(func(k key, _ []authz.ID) bool { return k.community == community })",
		New:   "_ = community",
		Tests: "^TestOC5_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-membership-invalidation-drops-open-set", Claims: []string{"OC-5"},
		What:  "a membership invalidation also drops the community's open set",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "c.members.Remove(key{community: community, reader: m.UserID})",
		New:   "c.members.Remove(key{community: community, reader: m.UserID})\n\t\tc.opens.Remove(key{community: community})",
		Tests: "^TestOC5_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-member-ttl-removed", Claims: []string{"OC-7"},
		What:  "the member half never expires",
		File:  "impl/accesschannels/member.go",
		Old:   "c.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL))",
		New:   "c.members.Put(k, ids, c.r.Now().Add(1<<62))",
		Tests: "^TestOC7_",
		Pkg:   "./scenarios/oc",
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
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-open-set-per-reader", Claims: []string{"OC-8"},
		What:  "the open set is cached per reader (the old design's load)",
		File:  "impl/accesschannels/cache.go",
		Old:   "open, err = c.openHalf(ctx, key{community: community})",
		New:   "open, err = c.openHalf(ctx, key{community: community, reader: reader})",
		Tests: "^TestOC8_",
		Pkg:   "./scenarios/oc",
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
		Pkg:   "./scenarios/oc",
	},
	{
		// Issue 36, kind 1: the simulated pool could not fail a checkout
		// with an error of its own until the fault table flew every call.
		ID: "oc-pool-error-reads-as-no-open-channels", Claims: []string{"OC-9"},
		What:  "a checkout for the open-set read that fails (not by the caller's context) reads as an empty open set, cached and shared",
		File:  "impl/accesschannels/open.go",
		Old:   "\tconn, err := c.pool.Acquire(ctx)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"accesschannels: open channels: acquire: %w\", err)\n\t}",
		New:   "\tconn, err := c.pool.Acquire(ctx)\n\tif err != nil && ctx.Err() == nil {\n\t\treturn nil, nil // the pool is exhausted: no open channels for now\n\t}\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"accesschannels: open channels: acquire: %w\", err)\n\t}",
		Tests: "^TestOC9_EveryFlowUnderFaults$",
		Pkg:   "./scenarios/oc",
	},
	{
		// Issue 36, kind 3: no world flew a writer whose own delivery came
		// late or never.
		ID: "relay-changed-relies-on-self-delivery", Claims: []string{"OC-5"},
		What:  "Changed skips the local drop when it publishes, relying on the bus delivering the message to its own pod",
		File:  "impl/relay/relay.go",
		Old:   "\tr.Invalidate(m)\n\tr.changed.Inc()\n\tif r.pub == nil {\n\t\treturn nil\n\t}",
		New:   "\tr.changed.Inc()\n\tif r.pub == nil {\n\t\tr.Invalidate(m)\n\t\treturn nil\n\t}",
		Tests: "^TestOC5_WriterPodReadsItsOwnWrite$",
		Pkg:   "./scenarios/oc",
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
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-member-hits-unregistered", Claims: []string{"OC-9"},
		What:  "accessible_channels_cache_hits_total is counted but never registered: the exporter does not show it",
		File:  "impl/accesschannels/metrics.go",
		Old:   "\tm.reg.Counter(MetricMemberHits, \"Per-reader member-channel half served from cache (member half only).\", &m.memberHits)\n",
		New:   "",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-open-hits-renamed", Claims: []string{"OC-9"},
		What:  "open_channels_cache_hits_total is registered under another name (open_channels_cache_hit_total)",
		File:  "impl/accesschannels/metrics.go",
		Old:   "m.reg.Counter(MetricOpenHits,",
		New:   "m.reg.Counter(\"open_channels_cache_hit_total\",",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-miss-reason-mislabelled", Claims: []string{"OC-9"},
		What:  "open-set misses are labelled cause=… instead of the source text's reason=…",
		File:  "impl/accesschannels/metrics.go",
		Old:   "stats.NewCounterVec(\"reason\", ReasonAbsent, ReasonExpired)",
		New:   "stats.NewCounterVec(\"cause\", ReasonAbsent, ReasonExpired)",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Survived while OC-9's failed and abandoned reads were all
		// open-set reads: TestOC9_MetricsAcrossFailedAndAbandonedReads now
		// fails a member read and abandons another.
		ID: "oc-member-miss-counted-after-read", Claims: []string{"OC-9"},
		What:  "a member-half miss is counted only once its read succeeded: a lookup whose member read fails or is abandoned is a miss never counted",
		File:  "impl/accesschannels/member.go",
		Old:   "\tc.m.memberMisses.Inc()\n\n\tids, err := c.readMember(ctx, k)\n\tif err != nil {\n\t\treturn nil, err // a failed read caches nothing\n\t}\n",
		New:   "\n\tids, err := c.readMember(ctx, k)\n\tif err != nil {\n\t\treturn nil, err // a failed read caches nothing\n\t}\n\tc.m.memberMisses.Inc()\n",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Found by a mutation hunt: OC-9's checks read the registry's own
		// snapshot, which quotes label values whatever the exposition
		// prints; they now read the exposition through the Prometheus
		// parser (series.Scrape).
		ID: "stats-vec-label-unquoted-oc", Claims: []string{"OC-9"},
		What:  "the exposition prints label values unquoted (open_channels_cache_misses_total{reason=absent}): not Prometheus text, no scraper reads the miss counters",
		File:  "impl/stats/stats.go",
		Old:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%q} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		New:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%s} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
}

// ocSites are where impl/accesschannels (and the wcache under it) encodes
// the OC bounds.
var ocSites = []Site{
	{Claim: "OC-2", Bound: "open set max age", File: "impl/accesschannels/config.go",
		Old: "DefaultMaxAgeOpen = 1 * time.Second", Literal: "1 * time.Second", Tests: "^TestOC2_", Pkg: "./scenarios/oc"},
	{Claim: "OC-2", Bound: "open set max age", File: "impl/accesschannels/open.go",
		Old:     "fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen))",
		Lenient: "fresh := !now.After(e.readStart.Add(c.cfg.MaxAgeOpen))", Tests: "^TestOC2_", Pkg: "./scenarios/oc"},
	{Claim: "OC-3", Bound: "window observed", File: "impl/accesschannels/config.go",
		Old: "DefaultMaxAgeOpen = 1 * time.Second", Literal: "1 * time.Second", Tests: "^TestOC3_", Pkg: "./scenarios/oc"},
	{Claim: "OC-4", Bound: "raced fill max age", File: "impl/accesschannels/config.go",
		Old: "DefaultMaxAgeOpen = 1 * time.Second", Literal: "1 * time.Second", Tests: "^TestOC4_", Pkg: "./scenarios/oc"},
	{Claim: "OC-4", Bound: "raced fill max age", File: "impl/accesschannels/open.go",
		Old:     "fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen))",
		Lenient: "fresh := !now.After(e.readStart.Add(c.cfg.MaxAgeOpen))", Tests: "^TestOC4_", Pkg: "./scenarios/oc"},
	{Claim: "OC-7", Bound: "member ttl", File: "impl/accesschannels/config.go",
		Old: "DefaultTTL = 10 * time.Second", Literal: "10 * time.Second", Tests: "^TestOC7_", Pkg: "./scenarios/oc"},
	{Claim: "OC-7", Bound: "member ttl", File: "impl/wcache/wcache.go",
		Old: "\tif !now.Before(n.expiresAt) {\n\t\tc.unlink(n)", Lenient: "\tif now.After(n.expiresAt) {\n\t\tc.unlink(n)", Tests: "^TestOC7_", Pkg: "./scenarios/oc"},
}

// ocRareMutants are wrong only in an interleaving a random workload seldom
// produces: a lookup after a community-wide invalidation while the open-set
// read begun before it is still in flight.
var ocRareMutants = []Mutant{
	{
		ID: "oc-drop-leaves-open-read-joinable", Claims: []string{"OC-5"},
		What:  "a community-wide invalidation leaves the open-set read in flight joinable, so a lookup after the drop is served by the read begun before it",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "\t\tdelete(c.flights, key{community: community})\n",
		New:   "",
		Tests: "^TestOC(4|5)_",
		Pkg:   "./scenarios/oc",
	},
	// The shared read that ends badly (scenarios/oc/sharedread_test.go):
	// each survived every check until readers were made to join a read
	// that fails, or whose caller gives up.
	{
		ID: "oc-joiner-of-failed-read-answers-without-open-half", Claims: []string{"OC-1"},
		What:  "a reader who joined a shared open-set read that failed gets no open channels and no error: wrong data given as complete",
		File:  "impl/accesschannels/open.go",
		Old:   "\t\tif f.err == nil {\n\t\t\treturn f.ids, nil",
		New:   "\t\tif f.err == nil || !f.abandoned {\n\t\t\treturn f.ids, nil",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-abandoned-read-fails-its-joiners", Claims: []string{"OC-1"},
		What:  "a read whose caller gave up is never marked abandoned, so the readers who joined it fail with that caller's cancellation",
		File:  "impl/accesschannels/open.go",
		Old:   "f.abandoned = err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())",
		New:   "f.abandoned = false && errors.Is(err, ctx.Err())",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-no-second-attempt-after-abandoned-read", Claims: []string{"OC-1"},
		What:  "a reader who joined an abandoned read does not start over: it fails although it did not give up",
		File:  "impl/accesschannels/open.go",
		Old:   "for attempt := 0; attempt < maxOpenAttempts; attempt++ {",
		New:   "for attempt := 0; attempt < 1; attempt++ {",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Found by a mutation hunt: the failed and abandoned reads ran only
		// from a cold cache with unchanged tables, so there was no aged
		// entry to fall back on and nothing to be stale about. They now
		// also run over an aged cached open set with a channel revoked
		// meanwhile, judged by OC-2's staleness bound.
		ID: "oc-retry-serves-stale-open-set", Claims: []string{"OC-2"},
		What:  "a lookup that starts over after an abandoned read is served the cached open set past its max age (inside its TTL): a revoked channel granted as long as the TTL",
		File:  "impl/accesschannels/open.go",
		Old:   "\t\t\tif fresh {",
		New:   "\t\t\tif fresh || attempt > 0 {",
		Tests: "^TestOC2_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-retry-counts-another-miss", Claims: []string{"OC-9"},
		What:  "a lookup that starts over after an abandoned read counts a second open-half miss",
		File:  "impl/accesschannels/open.go",
		Old:   "\t\tif attempt == 0 {\n\t\t\treason.Inc()",
		New:   "\t\tif true {\n\t\t\treason.Inc()",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		ID: "oc-retry-counts-a-hit", Claims: []string{"OC-9"},
		What:  "a lookup that starts over after an abandoned read and finds the new entry counts a hit besides its miss",
		File:  "impl/accesschannels/open.go",
		Old:   "\t\t\t\tif attempt == 0 { // a retry",
		New:   "\t\t\t\tif true { // a retry",
		Tests: "^TestOC9_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Found by audit try: OC-1's differential asked Accessible only,
		// and only OC-4's verdict over all its seeds caught this.
		ID: "oc-granted-ignores-open-half", Claims: []string{"OC-1"},
		What:  "Granted answers from the member half alone: a reader who is no member is never granted an open channel",
		File:  "impl/accesschannels/cache.go",
		Old:   "return contains(member, channel) || contains(open, channel), nil",
		New:   "return contains(member, channel) || (false && contains(open, channel)), nil",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Survived while OC-1's differential ran without read failures.
		ID: "oc-failed-member-read-cached-empty", Claims: []string{"OC-1"},
		What:  "a failed member-half read caches an empty member half for the TTL: the reader's member channels are denied until it expires",
		File:  "impl/accesschannels/member.go",
		Old:   "\t\treturn nil, err // a failed read caches nothing",
		New:   "\t\tc.mu.Lock()\n\t\tc.members.Put(k, nil, c.r.Now().Add(c.cfg.TTL))\n\t\tc.mu.Unlock()\n\t\treturn nil, err",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	{
		// Survived while no reader was a member of an open channel.
		ID: "oc-union-keeps-duplicates", Claims: []string{"OC-1"},
		What:  "the union lists a channel twice when it is in both halves (a member of an open channel)",
		File:  "impl/accesschannels/union.go",
		Old:   "\t\tif dup {\n\t\t\tj++",
		New:   "\t\tif dup && false {\n\t\t\tj++",
		Tests: "^TestOC1_",
		Pkg:   "./scenarios/oc",
	},
	// Data races no simulated check can see (mutants.Mutant.Race): the
	// lock each leaves out holds no scheduling point.
	{
		ID: "oc-member-insert-without-lock", Claims: []string{"OC-1"},
		What:  "the member half is inserted without the cache's lock: a data race with every lookup and invalidation",
		File:  "impl/accesschannels/member.go",
		Old:   "\tc.mu.Lock()\n\tc.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL)) // OC-7: the member half expires TTL after insertion\n\tc.mu.Unlock()",
		New:   "\tc.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL)) // OC-7: the member half expires TTL after insertion",
		Tests: "^TestOC1_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/oc",
		Race:  true,
	},
	{
		ID: "oc-invalidate-without-lock", Claims: []string{"OC-5"},
		What:  "an invalidation drops the halves without the cache's lock: a data race with every lookup",
		File:  "impl/accesschannels/invalidate.go",
		Old:   "\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tswitch m.Kind {",
		New:   "\tswitch m.Kind {",
		Tests: "^TestOC1_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/oc",
		Race:  true,
	},
}
