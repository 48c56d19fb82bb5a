// Package failfast is a fixture of the audit runner's tests: a "mutant" of
// it is caught by the first subtest of TestCaught, and every test or
// subtest after that one must not start.
package failfast

// Broken is what the fixture's overlay mutant turns true.
const Broken = false
