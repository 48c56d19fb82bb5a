package checks

import (
	"fmt"
	"slices"
	"sort"
)

// Commit is one entry of the database's commit log: from instant At (virtual
// ns) on, inclusive, the key's value is Value.
type Commit struct {
	At    int64
	Value bool
}

// KeyTruth is the commit log of one key: its value before the first commit
// and its commits in nondecreasing At. Several commits may share an instant;
// the last one listed is the value at that instant (the others were never
// observable at any instant).
type KeyTruth struct {
	Initial bool
	Commits []Commit
}

// Truth is the database's commit log for every key: the source of truth that
// staleness and the cross-check measure against. truth(k, t) is the value of
// the latest commit of k with At ≤ t, else k's initial value.
//
// Build it with make(Truth) (or a literal) and Declare / Commit as the
// simulated database commits, or as a literal in tests; Validate checks a
// literal.
type Truth map[string]KeyTruth

// Declare registers key with its value before any commit. Declaring a key
// twice is an error: it would silently rewrite history.
func (t Truth) Declare(key string, initial bool) error {
	if t == nil {
		return fmt.Errorf("checks: Declare(%q) on a nil Truth: create it with make(checks.Truth)", key)
	}
	if _, ok := t[key]; ok {
		return fmt.Errorf("checks: key %q declared twice", key)
	}
	t[key] = KeyTruth{Initial: initial}
	return nil
}

// Commit appends a commit of key at instant at. Commits of one key must come
// in nondecreasing instant order, as a database's commit log does.
func (t Truth) Commit(key string, at int64, value bool) error {
	kt, ok := t[key]
	if !ok {
		return fmt.Errorf("checks: commit to undeclared key %q", key)
	}
	if n := len(kt.Commits); n > 0 && at < kt.Commits[n-1].At {
		return fmt.Errorf("checks: commit to key %q at %d ns is before the previous commit at %d ns", key, at, kt.Commits[n-1].At)
	}
	kt.Commits = append(kt.Commits, Commit{At: at, Value: value})
	t[key] = kt
	return nil
}

// Keys returns the declared keys in sorted order.
func (t Truth) Keys() []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Validate reports the first problem found, in sorted key order: a key whose
// commits are not in nondecreasing instant order.
func (t Truth) Validate() error {
	for _, k := range t.Keys() {
		if err := t[k].validate(k); err != nil {
			return err
		}
	}
	return nil
}

func (kt KeyTruth) validate(key string) error {
	for i := 1; i < len(kt.Commits); i++ {
		if kt.Commits[i].At < kt.Commits[i-1].At {
			return fmt.Errorf("checks: key %q: commit #%d at %d ns is before commit #%d at %d ns (commits must be in nondecreasing instant order)",
				key, i, kt.Commits[i].At, i-1, kt.Commits[i-1].At)
		}
	}
	return nil
}

// Value returns truth(key, at): the value of the latest commit with At ≤ at
// (a commit takes effect at its instant), else the initial value.
func (t Truth) Value(key string, at int64) (bool, error) {
	kt, ok := t[key]
	if !ok {
		return false, fmt.Errorf("checks: unknown key %q", key)
	}
	if err := kt.validate(key); err != nil {
		return false, err
	}
	// Index of the first commit strictly after at; the one before it is the
	// latest commit in effect at at.
	i := sort.Search(len(kt.Commits), func(i int) bool { return kt.Commits[i].At > at })
	if i == 0 {
		return kt.Initial, nil
	}
	return kt.Commits[i-1].Value, nil
}
