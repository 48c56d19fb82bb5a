// Package audit turns the claim checks into an audit report, claim by
// claim. It runs every claim family's checks (scenarios/oc, ms, dr, tw,
// lf) over a number of seeds. It runs every mutant of scenarios/mutants
// against the checks that should catch it: the hand-written catalogue and
// the tolerance mutants derived from the claims table, each applied with
// go test -overlay. It writes a table, out/audit.json and out/AUDIT.md.
// The command is scenarios/cmd/audit (make audit, and the end of make sim).
//
// The claims are CLAIMS.md's (package claims); every ID in it must receive a
// verdict, or the audit fails with "not-checked".
package audit
