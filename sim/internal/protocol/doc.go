// Package protocol is the shrink-and-replay protocol between package sim and
// the tools under sim/ that record a run's choices, edit them and replay them
// (shrink, simtest, interleave, timeline, simdb, simbus). It is internal so
// that sim's own surface is what a workload author uses; sim fills in the
// hooks that reach into its runs from an init function (hooks.go).
package protocol
