# windtunnel: two commands do everything on a fresh machine.
#   make sim    the main job: every scenario over SEEDS seeds, every mutant, then the audit table
#   make test   the whole test suite (what CI runs, through .ci/run)
# See README.md for every target.

GO           ?= go
SEEDS        ?= 200
AUDIT_SEEDS  ?= 50
MUTANT_SEEDS ?= 50
PKG          ?= ./scenarios
OUT          ?= out
STATICCHECK  := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test unit race integration audit audit-quick sim replay bench lint

## test: everything CI proves: unit and seeded scenario tests, the race
## detector, the integration tests on real PostgreSQL and Redis, and a quick
## audit (every claim gets its expected verdict, every mutant is caught)
test: unit race integration audit-quick

## unit: vet, gofmt, go test ./... (seeded simulations at their default seed counts)
unit:
	$(GO) vet ./...
	@unformatted=$$(find . -name '*.go' -not -path './$(OUT)/*' -not -path './.git/*' | xargs gofmt -l); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -count=1 ./...

## race: the race detector on everything that runs real goroutines
race:
	$(GO) test -race -count=1 ./impl/... ./sim/...

## integration: start PostgreSQL and Redis on loopback (installing them from Debian packages if missing), run the integration tests, stop them
integration:
	impl/edge/testenv/run.sh $(GO) test -v -count=1 ./impl/edge/...

## audit: every claim's check over AUDIT_SEEDS seeds and every mutant; writes out/audit.json, out/AUDIT.md
audit:
	$(GO) run ./scenarios/cmd/audit -seeds $(AUDIT_SEEDS) -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)

audit-quick:
	$(GO) run ./scenarios/cmd/audit -seeds 5 -mutant-seeds 30 -out $(OUT)/quick

## sim: the main job: every scenario over SEEDS seeds, every mutant, then the audit table
sim:
	$(GO) run ./scenarios/cmd/audit -seeds $(SEEDS) -mutant-seeds $(MUTANT_SEEDS) -out $(OUT)

## replay: reproduce one run with its full trace: make replay TEST=TestName SEED=0x5eed [PKG=./scenarios] [STRATEGY=pct]
replay:
	@if [ -z "$(TEST)" ] || [ -z "$(SEED)" ]; then echo "usage: make replay TEST=TestName SEED=0x5eed [PKG=./scenarios] [STRATEGY=random|pct]"; exit 2; fi
	@mkdir -p $(OUT)/replay
	$(GO) test -count=1 $(PKG) -run '^$(TEST)$$/^seed=$(SEED)$$' -sim.seed=$(SEED) -sim.strategy=$(or $(STRATEGY),random) \
		-sim.trace=$(CURDIR)/$(OUT)/replay/$(TEST)-$(SEED).trace -sim.out=$(CURDIR)/$(OUT)/replay -sim.record=false -v

## bench: every benchmark, with memory statistics
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## lint: gofmt, go vet, staticcheck
lint:
	@unformatted=$$(find . -name '*.go' -not -path './$(OUT)/*' -not -path './.git/*' | xargs gofmt -l); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
