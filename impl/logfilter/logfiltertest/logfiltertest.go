// Package logfiltertest holds what the log filter's unit tests
// (impl/logfilter) and its claim checks (scenarios/lf) share: the fixed
// plain directive lists of LF-2's differential and a first-difference
// helper for comparing two filters' captured output.
package logfiltertest

import (
	"fmt"
	"strings"
)

// PlainLists are the fixed plain lists of LF-2's differential (the source
// text's own test has 17): bare levels, targets with their nested targets
// and prefix lookalikes, off, repeated targets, any case, whitespace and
// empty segments. Every one names no span and no field, so the plain
// filter must log exactly what the span-aware one logs.
var PlainLists = []string{
	"",
	"info",
	"trace",
	"off",
	"warn,buzz_relay=debug",
	"buzz_relay=trace",
	"buzz_relay::conn=debug,buzz_relay=warn",
	"buzz_relayer=info,buzz_relay=error",
	"info,buzz_relay=off",
	"debug,buzz_relay::conn=off,buzz_relay::conn::tls=trace",
	"  warn , , buzz_relay::conn=DEBUG,, ",
	"INFO,Buzz_Relay=DEBUG",
	"buzz_relay=debug,buzz_relay=error",
	"error,info",
	"other=trace,buzz_relay::conn::tls=warn",
	"buzz=trace",
	"buzz_relay::conn::tls=debug,buzz_relay::conn=info,buzz_relay=warn,error",
	",,,",
	"Warn,buzz_relayer=TRACE,other=off",
	"info=debug,buzz_relay::conn=error",
	"buzz_relay::connection=trace,buzz_relay::conn=error",
	"buzz_relay::con=trace,buzz_relay::conn=warn",
	"off,buzz_relay::conn::tls=info,buzz_relay=debug",
	"trace,buzz_relay=off,buzz_relayer=off,other=off,buzz_relay::connection=info",
	"buzz_relay::conn::tls=off,trace",
}

// FirstDiff shows the first line where two captured outputs differ, or
// "identical".
func FirstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q vs %q", i+1, x, y)
		}
	}
	return "identical"
}
