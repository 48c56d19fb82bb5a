# windtunnel: two commands do everything on a fresh machine.
#   make sim    the main job: every claim check over SEEDS seeds, every mutant, then the audit table
#   make test   the whole test suite (what CI runs, through .ci/run)
# See README.md for every target.

GO           ?= go
SEEDS        ?= 200
AUDIT_SEEDS  ?= 50
MUTANT_SEEDS ?= 50
PKG          ?= ./scenarios/oc
OUT          ?= out
# An execution count, not a duration: Go 1.26's fuzz coordinator can fail a
# target with a bare "context deadline exceeded" when a duration runs out
# under load (golang/go#75804, fixed in Go 1.27); a count has no deadline.
FUZZTIME     ?= 40000x
# A shrink's budget, in re-runs: SHRINK for every caught mutant, SHRINK_MORE more for one still above
# the goal (10 operations, 3 preemptions) after them, which only the timing races of the MS swarm use:
# at 400 more, ms-fence-accepts-any-loading-entry stopped at 1,282 operations and 6 preemptions, at
# 2,000 it reaches 5 operations and none, in 1,347 re-runs (6.5-7.6 s). SHRINK_WALL is a safety net,
# not a budget: a shrink it stops depends on the machine, so it stays well above the longest shrink
# (that one; tw3-scan-all-buckets, the longest until the run without operations was tried first, took
# 35 re-runs of 100,000 connections, 14-18 s).
SHRINK       ?= 200
SHRINK_MORE  ?= 2000
SHRINK_WALL  ?= 40s
# Every Go process the targets start (the compiler, the tests, the audit) collects garbage when its
# heap has grown to 5x what the last collection kept (GOGC=400; Go's default, 100, collects at 2x), but
# never lets the heap pass 1 GiB for that (GOMEMLIMIT, a soft limit: near it, collections come sooner).
# The simulations allocate fast and keep little: the claim checks at make audit-quick's seeds, one
# binary per family, used 15.4 -> 11.3 s of CPU (dr) and 9.2 -> 6.4 s (ms), peaking at 1.0 GB (dr).
# The environment's values win: GOGC=100 make test is Go's default (make race and make fuzz: LEAN_GOGC).
GOGC         ?= 400
# LEAN_GOGC: make race and make fuzz collect at Go's default instead: memory that grows with the heap
# (the race detector's shadow memory, several times the heap's size; the fuzzer's workers) costs
# more there in page faults than the collections a larger heap saves. Alternated runs: make race
# 79.1 CPU-s at 400 against 70.9 at 100 (2 runs at 400, 4 at 100; 72.5 at 200, 75.1 at 50), make fuzz 44.7
# against 41.9 (2 each), while make unit went the other way (90.3 at 400, 107.0 at 100).
LEAN_GOGC    ?= 100
GOMEMLIMIT   ?= 1GiB
export GOGC GOMEMLIMIT
# The same processes hand the memory their collections free back to the kernel lazily
# (GODEBUG=madvdontneed=0: MADV_FREE instead of Go's default MADV_DONTNEED). The kernel takes such
# pages only when it runs short; until then a heap that grows again into them finds them mapped,
# where after MADV_DONTNEED every page faults anew, and a fault costs about 9 µs on this machine's
# guest kernel. make sim, alternated (/usr/bin/time make sim): default 197.3 and 210.1 s (383.6 and
# 408.2 CPU-s, 4.4 M minor faults), madvdontneed=0 174.0 and 183.6 s (339.2 and 356.1 CPU-s, 3.4 M).
# make audit-quick, make unit and make race, whose processes are short, moved by 1% or less. Resident
# sizes read higher while the kernel has not taken the pages back. The environment's GODEBUG comes
# after it, so its settings win (GODEBUG=madvdontneed=1 make sim measures the default); one that
# names madvdontneed already (a make that make test started) is left as it is.
comma        := ,
export GODEBUG := $(if $(findstring madvdontneed=,$(GODEBUG)),$(GODEBUG),madvdontneed=0$(if $(GODEBUG),$(comma)$(GODEBUG)))
# Every binary the targets link (test binaries, the audit's builds, the commands) leaves out DWARF
# debug information (-ldflags=-w): nothing here reads it (stack traces, the race detector's reports
# and profiles use the symbol table, which stays), and linking without it took a quarter less CPU
# (sim/simtest's test binary: 1.81 -> 1.43 s), where make test links about 200 binaries. For a
# debugger (dlv), make ... LINKFLAGS= keeps it; the environment's GOFLAGS come first.
LINKFLAGS    ?= -ldflags=-w
# They are also built with -trimpath: file names in the binaries read from the module's path
# (github.com/windtunnel/windtunnel/sim/sim.go), not from the checkout's directory, so the build
# cache's entries for the module's own packages do not depend on where it is checked out. A fresh
# clone on a machine whose cache holds an earlier clone's build compiles nothing again; without it,
# every clone compiled every package of the module anew, with and without the race detector and the
# fuzzer's instrumentation (go vet ./... alone in a fresh clone: 33.8 CPU-s without, 1.0 with). For
# a debugger that should find the sources by their paths, make ... TRIMFLAGS= leaves them whole.
TRIMFLAGS    ?= -trimpath
export GOFLAGS := $(strip $(GOFLAGS) $(LINKFLAGS) $(TRIMFLAGS))
STATICCHECK  := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The claim families' test packages.
FAMILIES     := ./scenarios/oc/... ./scenarios/ms/... ./scenarios/dr/... ./scenarios/tw/... ./scenarios/lf/...

.PHONY: test vet unit race race-families integration determinism fuzz audit audit-quick audit-verify-schemata try-mutants sim sweep-slurm sweep-slurm-test replay shrink bench lint

## test: everything CI proves: unit and seeded claim checks, the race
## detector, the integration tests on real PostgreSQL and Redis, a
## timeline page rendered in headless Chromium, bounded fuzzing of every parser,
## and a quick audit (every claim gets its expected verdict, every tight
## bound is reached, every probe is reached, every mutant is caught) that also
## runs the first 2 seeds of every claim check and every proof twice (the determinism sample)
## (scripts/test-stages.sh runs them: vet alone; then unit and race in turn while integration,
## browser-test, sweep-slurm-test and fuzz run one after another in the background; then audit-quick
## alone. The service stages wait on their services, and a stage's last packages or a fuzz target's
## build leave a core idle: with fuzz after race, vmstat found 15% of the CPU idle over the 80 s of
## race's end and fuzz; with fuzz beside unit and race, 0-1% until audit-quick)
test:
	@scripts/test-stages.sh "$(MAKE)" $(OUT) "vet" "integration browser-test sweep-slurm-test fuzz" "unit race" "audit-quick"

## vet: go vet ./..., in make test alone before the stages make test runs at once: vetting
## compiles every package the tests import, so those stages find them in the build cache instead of
## each compiling the same packages beside the others (on a fresh clone, sweep-slurm-test's shards and
## make unit did). Linking every test binary here as well cost more than it saved: go test links a
## binary it runs every time, cached or not.
vet:
	$(GO) vet ./...

## unit: gofmt, and go test without the race detector (make test vets first: make vet) of what make race
## does not run in full: every package outside impl/ and sim/ but the claim families (FAMILIES: their
## tests, at their default seed counts, run in audit-quick, which judges them too and fails on any of
## them failing) and the STATIC analyses, in full; and, of RACEGATED, the packages whose tests read
## underRace, only those tests (scripts/race-gated-tests.sh names them: they skip or run smaller under
## -race), since make race runs the rest of those packages. TestPageRendersInChromium is left to make
## browser-test, which runs it. The two go test commands run side by side, so neither's last package
## leaves a core idle.
RACEGATED    = $$(grep -rlE --include='*_test.go' '\b[uU]nderRace\b' impl sim | xargs -n1 dirname | sort -u | sed 's|^|./|')
unit:
	@unformatted=$$(find . -name '*.go' -not -path './$(OUT)/*' -not -path './.git/*' | xargs gofmt -l); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	@gated=$$(scripts/race-gated-tests.sh impl sim) || exit 2; \
	full="$$($(GO) list ./... | grep -v -x -F "$$($(GO) list $(FAMILIES) ./impl/... ./sim/...)") $(STATIC)"; \
	echo "$(GO) test -count=1 $$(echo $$full) &"; \
	$(GO) test -count=1 $$full & full_pid=$$!; \
	status=0; \
	if [ -n "$$gated" ]; then \
		echo "$(GO) test -count=1 -run '$$gated' -skip Chromium $$(echo $(RACEGATED))"; \
		$(GO) test -count=1 -run "$$gated" -skip Chromium $(RACEGATED) || status=1; \
	fi; \
	wait $$full_pid || status=1; \
	exit $$status

## race: the race detector on everything that runs real goroutines (not the determinism
## scan and the contract test that runs it, STATIC: static analyses, no goroutines of ours; make unit runs them).
## GORACE's atexit_sleep_ms=0: a race-built binary otherwise sleeps 1 s before it exits (a grace time
## for goroutines still running to race), once per test binary and once per binary a test starts
## (sim/simtest's replay tests start dozens): 22 of the stage's 51 s on a warm cache. What it gives up:
## a goroutine a test leaves running past the binary's end gets no second to race. Every race before
## that fails the test it happened in (the detector reports at the access, testing fails the test).
## Then the claim families' RaceFree checks (Test<ID>_...RaceFree): real goroutines under the race
## detector, for the data races the simulator cannot see; the audit's Race mutants (mutants.Mutant.Race)
## must be caught by them, so here they must pass on the production code. -cpu 1,2, as the audit runs
## the Race mutants (mutants.RaceCPUs): on one processor, where only their yields interleave the
## goroutines, then on two.
## RACE_FIRST are the packages whose tests take longest under the race detector; they come first on
## the command line, so go test starts them first, instead of last (in the order of their paths):
## there, sim's tests ran on alone while the other core waited. 2 alternated runs each: 41.6 and
## 40.5 s -> 38.0 and 39.5 s.
STATIC       := github.com/windtunnel/windtunnel/impl github.com/windtunnel/windtunnel/sim/determinism
RACE_FIRST   := ./sim ./sim/simtest ./impl/collector ./impl/inactivitycop
race: export GOGC := $(LEAN_GOGC)
race:
	@first="$$($(GO) list $(RACE_FIRST))" && \
	rest="$$($(GO) list ./impl/... ./sim/... | grep -v -x -F "$$first" | grep -v -x -F "$$(printf '%s\n' $(STATIC))")" && \
	echo "$(GO) test -race -count=1" $$first $$rest && \
	GORACE="$${GORACE:+$$GORACE }atexit_sleep_ms=0" $(GO) test -race -count=1 $$first $$rest && \
	racefree="$$(grep -rl --include='*_test.go' -E '^func Test[A-Z]+[0-9]+_[A-Za-z]*RaceFree\(' scenarios | xargs -r -n1 dirname | sort -u | sed 's|^|./|')" && \
	if [ -n "$$racefree" ]; then echo "$(GO) test -race -count=1 -cpu 1,2 -run RaceFree" $$racefree; \
	GORACE="$${GORACE:+$$GORACE }atexit_sleep_ms=0" $(GO) test -race -count=1 -cpu 1,2 -run 'RaceFree' $$racefree; fi

## race-families: the claim families' tests under the race detector, 2 seeds each (WINDTUNNEL_SIM_SEEDS),
## run side by side as -sim.parallel runs them, with -short (the timed checks skip: under the detector
## their clocks would judge it, not the code). A seed's body must share nothing mutable with another
## seed's; this finds one that does, which the families' runs without the detector cannot. Not part of
## make test: 132 s and 256 CPU-s on 2 cores.
race-families: export GOGC := $(LEAN_GOGC)
race-families:
	GORACE="$${GORACE:+$$GORACE }atexit_sleep_ms=0" WINDTUNNEL_SIM_SEEDS=2 WINDTUNNEL_SIM_RECORD=false WINDTUNNEL_SIM_OUT=$(abspath $(OUT))/race-families \
		$(GO) test -race -short -count=1 -timeout 30m $(FAMILIES)

## integration: start PostgreSQL and Redis on loopback (installing them from Debian packages if missing), run the integration tests, stop them
integration:
	impl/edge/testenv/run.sh $(GO) test -v -count=1 ./impl/edge/...

## browser-test: render a timeline page in headless Chromium (installing Debian's chromium if missing), check the DOM after its script ran, save a screenshot in out/artifacts/timeline
.PHONY: browser-test
browser-test:
	sim/timeline/browser.sh $(GO) test -count=1 -run Chromium -v ./sim/timeline

## determinism: every claim check and proof twice per seed (two seeds each), failing on any difference in the trace
## (make test's audit-quick runs the same sample: -determinism 2)
determinism:
	WINDTUNNEL_SIM_DETERMINISM=true WINDTUNNEL_SIM_SEEDS=2 WINDTUNNEL_SIM_RECORD=false $(GO) test -count=1 $(FAMILIES)

## fuzz: every parser's fuzz target for FUZZTIME executions each (found inputs land in the package's testdata/fuzz)
fuzz: export GOGC := $(LEAN_GOGC)
fuzz:
	$(GO) test ./impl/authz -run '^$$' -fuzz FuzzDecodeMessage -fuzztime $(FUZZTIME)
	$(GO) test ./impl/logfilter -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./sim/simtest -run '^$$' -fuzz FuzzReplayFile -fuzztime $(FUZZTIME)
	$(GO) test ./sim/simtest -run '^$$' -fuzz FuzzCorpus -fuzztime $(FUZZTIME)
	$(GO) test ./scenarios/claims -run '^$$' -fuzz FuzzRecords -fuzztime $(FUZZTIME)

## audit: every claim's check over AUDIT_SEEDS seeds and every mutant, each caught mutant's first failing
## seed shrunk (SHRINK re-runs, SHRINK_WALL at most); writes out/audit.json, out/AUDIT.md
audit:
	$(GO) run ./scenarios/cmd/audit -seeds $(AUDIT_SEEDS) -mutant-seeds $(MUTANT_SEEDS) -shrink $(SHRINK) -shrink-more $(SHRINK_MORE) -shrink-wall $(SHRINK_WALL) -out $(OUT)

## audit-quick: the audit with every claim family's tests at their default seed counts (what go test
## runs), the first 2 seeds of each and every proof run twice and compared (the determinism sample),
## and 30 seeds per mutant, without shrinking (part of make test)
audit-quick:
	$(GO) run ./scenarios/cmd/audit -seeds default -determinism 2 -mutant-seeds 30 -shrink 0 -out $(OUT)/quick

## try-mutants: run your own mutants (a JSON file, MUTANTS=...) against the claim checks, each on an
## overlay of its own, MUTANT_SEEDS seeds each; prints which check caught each and which survived
##   make try-mutants MUTANTS=my-mutants.json
try-mutants:
	@if [ -z "$(MUTANTS)" ]; then echo "make try-mutants: name the file: make try-mutants MUTANTS=file.json (format: README, "Trying changes nobody thought of")"; exit 2; fi
	$(GO) run ./scenarios/cmd/audit try -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)/try $(MUTANTS)

## sim: the main job: every claim check over SEEDS seeds, every mutant, then the audit table
sim:
	$(GO) run ./scenarios/cmd/audit -seeds $(SEEDS) -mutant-seeds $(MUTANT_SEEDS) -shrink $(SHRINK) -shrink-more $(SHRINK_MORE) -shrink-wall $(SHRINK_WALL) -out $(OUT)

## sweep-slurm: the main job as a Slurm job array: SHARDS array tasks (default 4), each running
## its shard of SEEDS seeds per claim check and every SHARDS-th mutant, then audit merge into
## OUT/audit.json and OUT/AUDIT.md (needs sbatch and this checkout on every node; RUN, MUTANTS, ONLY,
## PARTITION, CPUS_PER_TASK, TIME_LIMIT, SBATCH_ARGS, WAIT_TIMEOUT pass through: scenarios/sweep/README.md)
##   make sweep-slurm SEEDS=1000 SHARDS=16
sweep-slurm:
	SEEDS=$(SEEDS) SHARDS=$(or $(SHARDS),4) MUTANT_SEEDS=$(MUTANT_SEEDS) OUT=$(OUT) GO=$(GO) scenarios/sweep/slurm/sweep.sh

## sweep-slurm-test: start a one-node Slurm cluster on loopback (installing Debian's slurmctld, slurmd,
## slurm-client and munge if missing), run a real sweep of 3 shards through sbatch, check that the
## merged audit equals the unsharded one, stop the cluster
sweep-slurm-test:
	scenarios/sweep/slurm/cluster.sh $(GO) test -v -count=1 -timeout 30m ./scenarios/sweep

## replay: reproduce one run with its full trace:
##   make replay FILE=/tmp/windtunnel/.../replay.txt PKG=./scenarios/oc   (the printed replay file: holds every setting)
##   make replay TEST=TestName SEED=0x5eed PKG=./scenarios/oc [STRATEGY=pct] [STEPTIME=1us] [MAXSTEPS=N]
replay:
	@if [ -z "$(FILE)" ] && { [ -z "$(TEST)" ] || [ -z "$(SEED)" ]; }; then echo "usage: make replay FILE=replay.txt PKG=./scenarios/<family>  or  make replay TEST=TestName SEED=0x5eed PKG=./scenarios/<family> [STRATEGY=random|pct] [STEPTIME=1us] [MAXSTEPS=N]"; exit 2; fi
	@mkdir -p $(OUT)/replay
	@set -e; \
	if [ -n "$(FILE)" ]; then \
		test=$$(sed -n 's/^test //p' "$(FILE)"); seed=$$(sed -n 's/^seed //p' "$(FILE)"); \
		if [ -z "$$test" ]; then echo "replay: $(FILE) is not a replay file (no test line)"; exit 2; fi; \
		top=$${test%%/*}; sub=$${test#*/}; run="^$$top\$$"; if [ "$$sub" != "$$test" ]; then run="$$run/^$$sub\$$"; fi; \
		flags="-sim.replay=$(abspath $(FILE))"; name=$$top-$$seed; \
	else \
		top=$$(echo "$(TEST)" | cut -d/ -f1); run="^$$top\$$/^seed=$(SEED)\$$"; \
		flags="-sim.seed=$(SEED) -sim.strategy=$(or $(STRATEGY),random)"; \
		if [ -n "$(STEPTIME)" ]; then flags="$$flags -sim.steptime=$(STEPTIME)"; fi; \
		if [ -n "$(MAXSTEPS)" ]; then flags="$$flags -sim.maxsteps=$(MAXSTEPS)"; fi; \
		name=$$top-$(SEED); \
	fi; \
	out=$$($(GO) test -count=1 $(PKG) -run "$$run" $$flags -sim.trace=$(abspath $(OUT))/replay/$$name.trace -sim.out=$(abspath $(OUT))/replay -sim.record=false -v 2>&1) || status=$$?; \
	echo "$$out"; \
	if echo "$$out" | grep -q "no tests to run"; then echo "replay: no test in $(PKG) matches $$run"; exit 2; fi; \
	exit $${status:-0}

## shrink: shrink a failing seed to a minimal run that fails the same way, and show it: what was
## removed, the interleaving table, the timeline page and a shrunk replay file (in OUT/shrink)
##   make shrink TEST=TestName SEED=0x5eed PKG=./scenarios/oc [STRATEGY=pct] [ATTEMPTS=600]
##   make shrink FILE=/tmp/windtunnel/.../replay.txt PKG=./scenarios/oc
shrink:
	@if [ -z "$(FILE)" ] && { [ -z "$(TEST)" ] || [ -z "$(SEED)" ]; }; then echo "usage: make shrink TEST=TestName SEED=0x5eed PKG=./scenarios/<family> [STRATEGY=random|pct] [ATTEMPTS=N]  or  make shrink FILE=replay.txt PKG=./scenarios/<family>"; exit 2; fi
	@mkdir -p $(OUT)/shrink
	@set -e; \
	if [ -n "$(FILE)" ]; then \
		test=$$(sed -n 's/^test //p' "$(FILE)"); \
		if [ -z "$$test" ]; then echo "shrink: $(FILE) is not a replay file (no test line)"; exit 2; fi; \
		top=$${test%%/*}; sub=$${test#*/}; run="^$$top\$$"; if [ "$$sub" != "$$test" ]; then run="$$run/^$$sub\$$"; fi; \
		flags="-sim.replay=$(abspath $(FILE))"; \
	else \
		top=$$(echo "$(TEST)" | cut -d/ -f1); run="^$$top\$$/^seed=$(SEED)\$$"; \
		flags="-sim.seed=$(SEED) -sim.strategy=$(or $(STRATEGY),random)"; \
	fi; \
	out=$$($(GO) test -count=1 -timeout 60m $(PKG) -run "$$run" $$flags -sim.shrink -sim.shrink.attempts=$(or $(ATTEMPTS),600) -sim.out=$(abspath $(OUT))/shrink -sim.record=false -v 2>&1) || status=$$?; \
	echo "$$out"; \
	if echo "$$out" | grep -q "no tests to run"; then echo "shrink: no test in $(PKG) matches $$run"; exit 2; fi; \
	if [ -z "$${status}" ]; then echo "shrink: the run passed: there is no failure to shrink"; exit 1; fi; \
	if echo "$$out" | grep -q "^ *shrunk  "; then echo "shrink: done (the shrunk run still fails, as it must)"; exit 0; fi; \
	echo "shrink: the run failed but was not shrunk (see \"shrink     not done\" above)"; exit 1

## bench: every benchmark, with memory statistics
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## lint: gofmt, go vet, staticcheck
lint:
	@unformatted=$$(find . -name '*.go' -not -path './$(OUT)/*' -not -path './.git/*' | xargs gofmt -l); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

## audit-verify-schemata: run every schematized mutant on the schema build and on its own overlay, and fail on any difference
audit-verify-schemata:
	$(GO) run ./scenarios/cmd/audit -verify-schemata -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)/verify
