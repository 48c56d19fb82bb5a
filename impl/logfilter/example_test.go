package logfilter_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// A service with two filtered outputs, logs and telemetry, over one span
// registry. The logs list is plain, so it takes the lock-free target
// table; the telemetry list names a span, so it takes the span-aware
// filter, and only its lock is taken on span enter and exit.
func Example() {
	logs, err := logfilter.New(rt.Real(), "info,buzz_relay=debug")
	if err != nil {
		panic(err)
	}
	otel, err := logfilter.New(rt.Real(), "warn,[conn]=trace")
	if err != nil {
		panic(err)
	}
	fmt.Println("logs:", logs.Kind(), "telemetry:", otel.Kind())

	// Text to stdout without the time, marked with the output's name.
	text := func(out string) slog.Handler {
		return slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
			Level: logfilter.LevelTrace, // the filters decide
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}).WithAttrs([]slog.Attr{slog.String("out", out)})
	}
	spans := logfilter.NewSpans(logs, otel)
	lh, err := spans.Handler(text("logs"), logs)
	if err != nil {
		panic(err)
	}
	th, err := spans.Handler(text("otel"), otel)
	if err != nil {
		panic(err)
	}
	logger := slog.New(slog.NewMultiHandler(lh, th)).With(logfilter.Target("buzz_relay::conn"))

	ctx := context.Background()
	logger.DebugContext(ctx, "before the connection") // logs only

	conn := spans.Start("buzz_relay", "conn", slog.String("peer", "198.51.100.7"))
	defer conn.Close()
	ctx = conn.Enter(ctx)
	logger.Log(ctx, logfilter.LevelTrace, "handshake") // telemetry only: [conn]=trace
	ctx = conn.Exit(ctx)

	logger.Log(ctx, logfilter.LevelTrace, "after the connection") // nobody

	_, err = logfilter.New(rt.Real(), "info,buzz_relay=verbose")
	fmt.Println(err)
	// Output:
	// logs: targets telemetry: span-aware
	// level=DEBUG msg="before the connection" out=logs target=buzz_relay::conn
	// level=DEBUG-4 msg=handshake out=otel target=buzz_relay::conn
	// logfilter: segment 1 "buzz_relay=verbose": unknown level (want trace, debug, info, warn, error or off): "verbose"
}
