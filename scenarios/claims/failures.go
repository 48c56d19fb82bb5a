package claims

import (
	"testing"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Failures collects the errors of a check's real goroutines (the RaceFree
// checks run the production code on rt.Real) under a lock of the runtime,
// so that a goroutine reports its failure and stops instead of calling
// t.Fatal off the test's goroutine.
type Failures struct {
	mu   rt.Mutex
	errs []error
}

// NewFailures returns an empty collection guarded by a lock of r.
func NewFailures(r rt.Runtime) *Failures {
	return &Failures{mu: r.NewMutex("claims.failures")}
}

// Add records err.
func (f *Failures) Add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

// Report fails t with every error recorded; call it once the goroutines
// are done.
func (f *Failures) Report(t testing.TB) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, err := range f.errs {
		t.Error(err)
	}
}
