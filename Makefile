# windtunnel: two commands do everything on a fresh machine.
#   make sim    the main job: every scenario over the default seeds, then the audit table
#   make test   the whole test suite (what CI runs, through .ci/run)
# See README.md for every target.

GO        ?= go
SEEDS     ?= 200
PKG       ?= ./scenarios
OUT       ?= out
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test unit race sim replay bench lint

## test: unit tests, seeded simulations at their go-test seed counts, the race detector on everything that runs real goroutines
test: unit race

unit:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -count=1 ./...

race:
	$(GO) test -race -count=1 ./impl/... ./sim/...

## sim: every scenario over $(SEEDS) seeds, then the audit table
sim:
	@if [ -d scenarios ] && ls scenarios/*_test.go >/dev/null 2>&1; then \
		$(GO) test -count=1 -v $(PKG) -sim.seeds=$(SEEDS); \
	else \
		echo "windtunnel: no scenarios exist yet; running the simulator's own seeded tests instead"; \
		$(GO) test -count=1 -v ./sim/... ; \
	fi

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
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
