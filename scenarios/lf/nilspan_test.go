package lf

import (
	"context"
	"log/slog"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestLF4_SpanWithoutRegistryIsInert enters, exits and closes a nil span
// and a zero one (no registry), which the span methods accept: each call
// must be a no-op, twice over, and an event logged in the context they
// returned must be judged as outside every span. LF-4's workloads only use
// spans a registry started, so a method that dereferenced the registry of
// such a span passed them.
func TestLF4_SpanWithoutRegistryIsInert(t *testing.T) {
	f, err := logfilter.New(rt.Real(), "warn,[conn]=debug")
	if err != nil {
		t.Fatal(err)
	}
	spans := logfilter.NewSpans(f)
	h, err := spans.Handler(slog.DiscardHandler, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range []*logfilter.Span{nil, {}} {
		for range 2 {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("LF-4: a span without a registry (%v): %v", sp == nil, p)
					}
				}()
				ctx := sp.Enter(context.Background())
				if h.Enabled(ctx, slog.LevelDebug) {
					t.Errorf("LF-4: debug enabled inside a span without a registry; [conn]=debug holds only in conn spans")
				}
				sp.Exit(ctx)
				sp.Close()
			}()
		}
	}
}
