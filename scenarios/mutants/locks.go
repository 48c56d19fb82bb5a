package mutants

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// KindLock is the kind of a mutant Locks derives: one lock of impl left out.
const KindLock = "lock"

// lockFamily is a package of impl whose locks the claim family checks: its
// RaceFree checks run the package on real goroutines.
type lockFamily struct {
	dir    string   // the package, under the module root
	pkg    string   // the claim family's package
	claims []string // the claims of the family's RaceFree checks
}

// lockFamilies are the packages of impl the claims are about, each with
// the claim family whose RaceFree checks run it on real goroutines.
var lockFamilies = []lockFamily{
	{"impl/accesschannels", "./scenarios/oc", []string{"OC-1"}},
	{"impl/collector", "./scenarios/dr", []string{"DR-7", "DR-9"}},
	{"impl/inactivitycop", "./scenarios/tw", []string{"TW-2"}},
	{"impl/logfilter", "./scenarios/lf", []string{"LF-4"}},
	{"impl/membership", "./scenarios/ms", []string{"MS-3"}},
}

// lockExempt are the locks Locks leaves alone, by package and function,
// each with why no check can tell the lock from its absence.
// TestNoLockIsExemptForNothing keeps the list current.
var lockExempt = map[string]string{
	"logfilter.spanCount": "only the package's own tests call it (export_test.go): no production path reaches it",
}

// RaceFreeTests is the pattern of a family's RaceFree checks: the checks
// a Race mutant runs, unless it names some of them.
const RaceFreeTests = "^Test[A-Z]+[0-9]+_RealGoroutinesRaceFree$"

var (
	lockLine = regexp.MustCompile(`^(\s*)([\w.]+)\.(Lock|RLock)\(\)$`)
	funcLine = regexp.MustCompile(`^func (?:\([^)]*\) )?(\w+)`)
)

// Locks derives one Race mutant per lock the packages of lockFamilies
// take: the Lock (or RLock) and its Unlock (deferred on the next line, or
// at the same depth further down the same function) left out, the code
// between them kept. The simulator runs one task at a time, and yields
// inside a held lock only at its Unlock, so many such mutants change
// nothing a simulated check sees; the family's RaceFree checks run the
// code on real goroutines under the race detector, and must catch every
// one. A lock added to impl gets its mutant without anyone writing it;
// LockContext and TryLock, whose failure the code handles, are left to the
// hand-written catalogue. A lock a hand-written Race mutant already
// leaves out (its snippet overlaps) is not derived again. A write lock of
// a reader/writer lock gets a second mutant, the lock weakened to a read
// lock (…-as-read-lock): the race checks take their read locks through
// racefree.Preempting, which yields inside every read hold, so two such
// holds overlap even on one processor.
func Locks(root string) ([]Mutant, error) {
	taken := map[string][][2]int{} // file -> the byte ranges the catalogue's Race mutants edit
	for _, m := range All() {
		if m.Race {
			data, err := os.ReadFile(filepath.Join(root, m.File))
			if err != nil {
				return nil, fmt.Errorf("mutant %s: %w", m.ID, err)
			}
			at := strings.Index(string(data), m.Old)
			if at < 0 {
				return nil, fmt.Errorf("mutant %s: its snippet does not occur in %s", m.ID, m.File)
			}
			taken[m.File] = append(taken[m.File], [2]int{at, at + len(m.Old)})
		}
	}
	var out []Mutant
	for _, fam := range lockFamilies {
		files, err := packageSources(root, fam.dir)
		if err != nil {
			return nil, err
		}
		perFunc := map[string]int{}
		readLocked := readLockedObjects(files)
		for _, f := range files {
			rel, data := f.rel, f.text
			for _, s := range lockSites(data) {
				pkgName := filepath.Base(fam.dir)
				if _, ok := lockExempt[pkgName+"."+s.fn]; ok {
					continue
				}
				perFunc[s.fn]++
				id := "lock-" + pkgName + "-" + s.fn
				if n := perFunc[s.fn]; n > 1 {
					id += fmt.Sprint("-", n)
				}
				if !overlaps(taken[rel], strings.Index(data, s.old), len(s.old)) {
					out = append(out, Mutant{
						ID: id, Claims: fam.claims, Kind: KindLock,
						What:  fmt.Sprintf("%s leaves out its %s of %s: a data race with every other use of what it guards", s.fn, s.kind, s.obj),
						File:  rel,
						Old:   s.old,
						New:   s.new,
						Tests: RaceFreeTests,
						Pkg:   fam.pkg,
						Race:  true,
					})
				}
				if s.kind == "Lock" && readLocked[s.obj] {
					// A reader/writer lock: the write lock weakened to a
					// read lock lets two writers, or a writer and readers,
					// in at once.
					out = append(out, Mutant{
						ID: id + "-as-read-lock", Claims: fam.claims, Kind: KindLock,
						What:  fmt.Sprintf("%s takes only a read lock of %s where it writes: a data race with every other holder", s.fn, s.obj),
						File:  rel,
						Old:   s.old,
						New:   weakened(s.old, s.obj),
						Tests: RaceFreeTests,
						Pkg:   fam.pkg,
						Race:  true,
					})
				}
			}
		}
	}
	return out, nil
}

// readLockedObjects are the locks the package's files read-lock somewhere
// (X.RLock()): reader/writer locks, whose write locks can be weakened.
func readLockedObjects(files []source) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, l := range strings.Split(f.text, "\n") {
			if m := lockLine.FindStringSubmatch(l); m != nil && m[3] == "RLock" {
				out[m[2]] = true
			}
		}
	}
	return out
}

// source is one production file of a package: its path under the module
// root, and its text.
type source struct{ rel, text string }

// packageSources are the production files (not _test.go) of the package
// in dir under root, in name order.
func packageSources(root, dir string) ([]source, error) {
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []source
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, source{rel: filepath.ToSlash(filepath.Join(dir, filepath.Base(name))), text: string(data)})
	}
	return out, nil
}

// weakened is snippet with obj's write lock and unlock made read ones.
func weakened(snippet, obj string) string {
	snippet = strings.Replace(snippet, obj+".Lock()", obj+".RLock()", 1)
	return strings.Replace(snippet, obj+".Unlock()", obj+".RUnlock()", 1)
}

// lockSite is one lock of a file: the function that takes it, what it
// locks, and the edit that leaves it out.
type lockSite struct {
	fn, obj, kind string
	old, new      string
}

// lockSites finds the locks of a Go source file, line by line: a line that
// is only X.Lock() or X.RLock(), whose unlock is deferred on the next line
// or is a line X.Unlock() (X.RUnlock()) at the same indentation before the
// function ends. The snippet runs from the lock to the unlock, and on past
// a deferred one until it occurs once in the file.
func lockSites(src string) []lockSite {
	lines := strings.Split(src, "\n")
	var out []lockSite
	fn := ""
	for i, l := range lines {
		if m := funcLine.FindStringSubmatch(l); m != nil {
			fn = m[1]
			continue
		}
		m := lockLine.FindStringSubmatch(l)
		if m == nil || fn == "" {
			continue
		}
		indent, obj, kind := m[1], m[2], m[3]
		unlock := obj + ".Unlock()"
		if kind == "RLock" {
			unlock = obj + ".RUnlock()"
		}
		end, deferred := -1, false
		if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "defer "+unlock {
			end, deferred = i+1, true
		} else {
			for k := i + 1; k < len(lines) && !strings.HasPrefix(lines[k], "}"); k++ {
				if lines[k] == indent+unlock {
					end = k
					break
				}
			}
		}
		if end < 0 {
			continue
		}
		kept := slicesWithout(lines[i:end+1], 0, end-i)
		old := strings.Join(lines[i:end+1], "\n")
		newText := strings.Join(kept, "\n")
		if deferred { // the two lines alone say nothing of the function: take what follows until unique
			for k := end + 1; k < len(lines) && strings.Count(src, old) != 1 && !strings.HasPrefix(lines[k], "}"); k++ {
				old += "\n" + lines[k]
				newText = strings.TrimPrefix(newText+"\n"+lines[k], "\n")
			}
		}
		if strings.Count(src, old) != 1 {
			continue
		}
		out = append(out, lockSite{fn: fn, obj: obj, kind: kind, old: old, new: newText})
	}
	return out
}

// slicesWithout returns lines without the elements at indexes a and b.
func slicesWithout(lines []string, a, b int) []string {
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		if i != a && i != b {
			out = append(out, l)
		}
	}
	return out
}

// overlaps reports whether [at, at+n) meets one of ranges.
func overlaps(ranges [][2]int, at, n int) bool {
	for _, r := range ranges {
		if at < r[1] && r[0] < at+n {
			return true
		}
	}
	return false
}
