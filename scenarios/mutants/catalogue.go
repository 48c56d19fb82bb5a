// Package mutants is the mutant catalogue: small, realistic changes to the
// production code (impl/), one exact edit of one file each, with the claim
// checks that must catch them. The audit (scenarios/audit) applies each
// with go test -overlay, so production code carries no hooks for them, and
// fails when one survives its seed budget.
//
// One file per family (oc.go, ms.go, dr.go, tw.go, lf.go). tolerance.go
// derives more from the claims table: every bound widened, so a check that
// cannot tell a bound from a slightly wider one is caught. And locks.go
// derives one more per lock the claimed packages take, left out, for the
// race detector under the families' RaceFree checks.
//
// Keep each Old snippet to the line that embodies the decision. When the
// production code changes there, TestEveryMutantAppliesExactlyOnce fails
// with "occurs 0 times" and the mutant must be rewritten, never silently
// dropped. Test patterns follow the naming convention Test<ID without the
// dash>_<What>, so ^TestOC1_ never matches TestOC10_.
package mutants

// All returns the hand-written catalogue, family by family.
func All() []Mutant {
	var all []Mutant
	for _, family := range [][]Mutant{ocMutants, ocMetricMutants, ocRareMutants, msMutants, msRareMutants, msNewMutants, drMutants, twMutants, lfMutants} {
		for _, m := range family {
			m.Kind = KindCatalogue
			all = append(all, m)
		}
	}
	return all
}

// Everything is the catalogue, the tolerance mutants and the lock mutants
// derived from the code under root (Locks).
func Everything(root string) ([]Mutant, error) {
	tol, err := Tolerance()
	if err != nil {
		return nil, err
	}
	locks, err := Locks(root)
	if err != nil {
		return nil, err
	}
	return append(append(All(), tol...), locks...), nil
}
