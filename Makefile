# windtunnel: `make sim` runs the main job, `make test` runs the tests (what CI runs). See README.md.

GO           ?= go
SEEDS        ?= 200
AUDIT_SEEDS  ?= 50
MUTANT_SEEDS ?= 50
OUT          ?= out
RUN          ?= ^Test
ONLY         ?=
FUZZTIME     ?= 10000x
FUZZ         ?= ./impl/authz:FuzzDecodeMessage ./impl/logfilter:FuzzParse ./sim/simtest:FuzzReplayFile ./sim/simtest:FuzzCorpus ./scenarios/claims/findings:FuzzRecords
SHRINK       ?= 200
SHRINK_MORE  ?= 2000
SHRINK_WALL  ?= 40s
MUTATION_SAMPLE ?= 0
MUTATION_SEEDS  ?= 20
MUTATION_TARGETS ?=
BUGBENCH_SEEDS   ?= 2000
BUGBENCH_WALL    ?= 60s
BUGBENCH_MUTANTS ?=
BUGBENCH_RACE    ?= true
FLIGHT_ROUNDS   ?= 6
FLIGHT_LONG     ?= 2
FLIGHT_MUTANTS  ?= oc-no-age-check,oc-age-from-fill-completion,oc-member-ttl-removed,ms-no-expiry,ms-expiry-from-load-completion
FLIGHT_ARGS     ?=
GOKER_SEEDS      ?= 20
GOKER_STRATEGIES ?= random,pct,pos,surw,goorder
GOKER_REAL       ?= 20
GOKER_RUN        ?= .*
GOKER_STEPS      ?= 5000000
GOKER_SETTLE     ?= 1s
GOKER_WALL       ?= 5m
GOKER_LONG_STEPS  ?= 2000000000
GOKER_LONG_SETTLE ?= 1h
GOKER_LONG_WALL   ?= 30m
GOKER_LONG_SHRINK ?= 10m
export GOKER_STEPS GOKER_SETTLE
STATICCHECK  := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
FAMILIES     := ./scenarios/oc ./scenarios/ms ./scenarios/dr ./scenarios/tw ./scenarios/lf
STATIC       := ./impl ./sim/determinism
GOFILES      := find . -name '*.go' -not -path './.git/*' -not -path './$(OUT)/*' -not -path './out/*'
AUDIT        := $(GO) run ./scenarios/cmd/audit
RUN_ARGS     := -out "$(OUT)" -file "$(FILE)" -pkg "$(PKG)" -test "$(TEST)" -seed "$(SEED)" -strategy "$(STRATEGY)" -mutant "$(MUTANT)" -mutants "$(MUTANTS)" -args "$(ARGS)"

.PHONY: test sim vet unit docs race race-families integration browser-test determinism fuzz audit audit-quick \
	audit-verify-schemata try-mutants mutation mutation-rerun sweep-slurm sweep-slurm-test replay shrink bench bugbench goker goker-replay lint flight

## test: every stage CI runs, through scripts/test-stages.sh (vet; the service and docs stages beside unit and race; audit-quick)
test:
	@scripts/test-stages.sh "$(MAKE)" $(OUT) "vet" "integration browser-test sweep-slurm-test docs" "unit race" "audit-quick"

## sim: the main job: every claim check over SEEDS seeds, every mutant, each catch shrunk; writes OUT/AUDIT.md
sim:
	$(AUDIT) -seeds $(SEEDS) -mutant-seeds $(MUTANT_SEEDS) -shrink $(SHRINK) -shrink-more $(SHRINK_MORE) -shrink-wall $(SHRINK_WALL) -out $(OUT) -run '$(RUN)' -only '$(ONLY)'

## vet: go vet on every package
vet:
	$(GO) vet ./...

## unit: gofmt, then every package's tests without the race detector, but the claim families (audit-quick) and docs
unit:
	@test -z "$$(gofmt -l $$($(GOFILES)))" || { echo "gofmt -l lists:"; gofmt -l $$($(GOFILES)); exit 1; }
	$(GO) test -count=1 -skip Chromium $$($(GO) list ./... | grep -v -x -F "$$($(GO) list $(FAMILIES) ./docs)")

## docs: every shell command of README.md and docs/, run as written (long ones at tiny sizes)
docs:
	$(GO) test -count=1 -timeout 30m ./docs

## race: impl/ and sim/ under the race detector (but the static analyses), then the RaceFree checks on 1 and 2 CPUs
race:
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 $$($(GO) list ./impl/... ./sim/... | grep -v -x -F "$$($(GO) list $(STATIC))")
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -cpu 1,2 -run 'RaceFree' $(FAMILIES)

## race-families: the claim families under the race detector, 2 seeds each (not part of make test)
race-families:
	WINDTUNNEL_SIM_SEEDS=2 WINDTUNNEL_SIM_RECORD=false $(GO) test -race -short -count=1 -timeout 30m $(FAMILIES)

## integration: the integration tests and a short flight on PostgreSQL, Redis and Toxiproxy, installed and started on loopback by the scripts
integration:
	GO=$(GO) impl/edge/testenv/run.sh scripts/toxiproxy.sh $(GO) test -v -count=1 ./impl/edge/... ./scenarios/cmd/flight

## flight: relays flown on real PostgreSQL and Redis with faults (Toxiproxy), judged by checks/ on the claims' bounds; then FLIGHT_MUTANTS, each must be caught
flight:
	GO=$(GO) impl/edge/testenv/run.sh scripts/toxiproxy.sh $(GO) run ./scenarios/cmd/flight -rounds $(FLIGHT_ROUNDS) -long $(FLIGHT_LONG) -mutants '$(FLIGHT_MUTANTS)' $(FLIGHT_ARGS)

## browser-test: the timeline page rendered in headless Chromium, installed by the script
browser-test:
	sim/timeline/browser.sh $(GO) test -count=1 -run Chromium -v ./sim/timeline

## determinism: every claim check and proof twice per seed, 2 seeds each, failing on any difference
determinism:
	WINDTUNNEL_SIM_DETERMINISM=true WINDTUNNEL_SIM_SEEDS=2 WINDTUNNEL_SIM_RECORD=false $(GO) test -count=1 $(FAMILIES)

## fuzz: each fuzz target of FUZZ (package:target, all by default) for FUZZTIME executions (not part of make test: unit runs their seed corpora)
fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*} fn=$${t##*:}; \
		$(GO) test $$pkg -list "^$$fn\$$" | grep -qx "$$fn" || { echo "make fuzz: $$pkg has no fuzz target $$fn (FUZZ lists package:target)"; exit 1; }; \
		echo "$(GO) test $$pkg -run '^$$' -fuzz '^$$fn$$' -fuzztime $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

## audit: make sim at AUDIT_SEEDS seeds
audit:
	$(AUDIT) -seeds $(AUDIT_SEEDS) -mutant-seeds $(MUTANT_SEEDS) -shrink $(SHRINK) -shrink-more $(SHRINK_MORE) -shrink-wall $(SHRINK_WALL) -out $(OUT) -run '$(RUN)' -only '$(ONLY)'

## audit-quick: the audit at each check's default seeds, 2 of them run twice, 30 seeds per mutant, no shrinking
audit-quick:
	$(AUDIT) -seeds default -determinism 2 -mutant-seeds 30 -shrink 0 -out $(OUT)/quick

## audit-verify-schemata: every schematized mutant on the schema build and on its own overlay, compared
audit-verify-schemata:
	$(AUDIT) -verify-schemata -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)/verify

## try-mutants: your own mutants (MUTANTS=file.json) against their families' checks
try-mutants:
	$(AUDIT) try -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)/try "$(MUTANTS)"

## mutation: mechanical mutants of impl/'s claimed packages against their families' checks, and the efficacy table
mutation:
	$(AUDIT) mutation -sample $(MUTATION_SAMPLE) -mutant-seeds $(MUTATION_SEEDS) -targets '$(MUTATION_TARGETS)' -out $(OUT)/mutation

## mutation-rerun: only the gaps and unrun mutants of the last make mutation, against today's checks; writes OUT/mutation-rerun
mutation-rerun:
	$(AUDIT) mutation -rerun $(OUT)/mutation/mutation.json -mutant-seeds $(MUTATION_SEEDS) -out $(OUT)/mutation-rerun

## sweep-slurm: make sim as a Slurm job array of SHARDS tasks, merged into OUT (scenarios/sweep/README.md)
sweep-slurm:
	SEEDS=$(SEEDS) SHARDS=$(or $(SHARDS),4) MUTANT_SEEDS=$(MUTANT_SEEDS) OUT=$(OUT) GO=$(GO) scenarios/sweep/slurm/sweep.sh

## sweep-slurm-test: a real 3-shard sweep on a one-node Slurm cluster on loopback, started by the script
sweep-slurm-test:
	scenarios/sweep/slurm/cluster.sh $(GO) test -v -count=1 -timeout 30m ./scenarios/sweep

## replay: one run again on the code it flew: FILE=replay.txt, or PKG= TEST= SEED= [MUTANT= [MUTANTS=]] [STRATEGY=] [ARGS=]
replay:
	@$(AUDIT) replay $(RUN_ARGS)

## shrink: a failing run shrunk to a minimal one, with its table and timeline page; replay's arguments, ATTEMPTS=
shrink:
	@$(AUDIT) shrink $(RUN_ARGS) -attempts "$(or $(ATTEMPTS),600)"

## bench: every benchmark, with memory statistics
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bugbench: time to catch each benchmarked mutant under random, pct, pos, surw, stress (-race) and synctest; writes OUT/bugbench.md
bugbench:
	$(GO) run ./scenarios/cmd/bugbench -seeds $(BUGBENCH_SEEDS) -wall $(BUGBENCH_WALL) -mutants '$(BUGBENCH_MUTANTS)' -race=$(BUGBENCH_RACE) -out $(OUT)/bugbench.md

## goker: GoKer's blocking-bug kernels from the Go installation, translated; each flown on GOKER_SEEDS seeds under each of GOKER_STRATEGIES (every seed run, at most GOKER_STEPS steps, GOKER_SETTLE of settling after the kernel returns, GOKER_WALL for the seeds of one strategy: its rate; a kernel no strategy found is flown again, GOKER_LONG_STEPS steps and GOKER_LONG_SETTLE of settling, by each strategy the budget stopped, GOKER_LONG_WALL each, its shrink GOKER_LONG_SHRINK; 0 steps: never), its first found seed shrunk and replayed, and run GOKER_REAL times on real goroutines; writes OUT/goker.md
goker:
	@mkdir -p $(OUT)/goker
	$(GO) test -count=1 -timeout 6h -v -run TestGoKerAll ./translate/goker -goker.all -goker.dir $(abspath $(OUT))/goker -goker.seeds $(GOKER_SEEDS) -goker.strategies '$(GOKER_STRATEGIES)' -goker.real $(GOKER_REAL) -goker.run '$(GOKER_RUN)' -goker.wall $(GOKER_WALL) -goker.long.steps $(GOKER_LONG_STEPS) -goker.long.settle $(GOKER_LONG_SETTLE) -goker.long.wall $(GOKER_LONG_WALL) -goker.long.shrink.wall $(GOKER_LONG_SHRINK) -goker.table $(abspath $(OUT))/goker.md -goker.command "make goker GOKER_SEEDS=$(GOKER_SEEDS) GOKER_REAL=$(GOKER_REAL) GOKER_STRATEGIES=$(GOKER_STRATEGIES) GOKER_STEPS=$(GOKER_STEPS) GOKER_SETTLE=$(GOKER_SETTLE) GOKER_WALL=$(GOKER_WALL) GOKER_LONG_STEPS=$(GOKER_LONG_STEPS) GOKER_LONG_SETTLE=$(GOKER_LONG_SETTLE) GOKER_LONG_WALL=$(GOKER_LONG_WALL) GOKER_LONG_SHRINK=$(GOKER_LONG_SHRINK)"

## goker-replay: one GoKer kernel's seed again with its report: KERNEL=… SEED=… [STRATEGY=random] [SHRINK=true] [GOKER_STEPS=… GOKER_SETTLE=…, as it was flown], or a shrunk run's replay file: KERNEL=… FILE=… [GOKER_WALL=5m, the replay's wall time]
goker-replay:
	$(GO) test -count=1 -timeout 1h -run TestGoKerReplay ./translate/goker -v -goker.run '$(KERNEL)' -goker.replay '$(SEED)' -goker.replayfile '$(FILE)' -goker.strategies '$(or $(STRATEGY),random)' -goker.shrink=$(if $(filter true,$(SHRINK)),true,false) -goker.wall $(GOKER_WALL)

## lint: gofmt, go vet and staticcheck
lint:
	@test -z "$$(gofmt -l $$($(GOFILES)))" || { echo "gofmt -l lists:"; gofmt -l $$($(GOFILES)); exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
