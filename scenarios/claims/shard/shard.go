// Package shard holds the sample files of a sharded sweep. A sweep can be
// split into shards (-sim.shard=i/n, or WINDTUNNEL_SIM_SHARD), each run by a
// machine of its own. With WINDTUNNEL_SHARD_OUT=DIR, every claim check
// writes its seeds' samples to DIR/samples/<test>.jsonl (Write); with
// WINDTUNNEL_SHARD_MERGE=DIR1,DIR2,... (Merging), a check flies nothing and
// judges the union of the shards' samples instead (Read), through the same
// merge, verdict and texts as an unsharded run, so the merged records equal
// an unsharded run's. Read refuses a set of shards with a missing, doubled
// or foreign slice, naming it.
package shard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/sim/simtest"
)

type shardHeader struct {
	Test  string `json:"test"`
	Shard string `json:"shard"`
	Seeds int    `json:"seeds"` // the test's regular seeds over the whole sweep
}

// Seed is one seed's outcome as a check merges it: what the harness
// reported and the sample (S) the check made of the body's value.
type Seed[S any] struct {
	Seed    uint64           `json:"seed"`
	Index   int              `json:"index"` // the regular seed's index, -1 for a corpus seed
	Failure string           `json:"failure,omitempty"`
	Probes  map[string]int64 `json:"probes,omitempty"`
	Sample  S                `json:"sample"`
}

// Merging returns the shards' directories when the run merges a sweep
// (WINDTUNNEL_SHARD_MERGE), nil when it flies its own seeds.
func Merging() []string {
	v := os.Getenv("WINDTUNNEL_SHARD_MERGE")
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func samplesPath(dir, test string) string {
	return filepath.Join(dir, "samples", strings.ReplaceAll(test, "/", "_")+".jsonl")
}

// Write writes a check's samples when the run is a shard of a sweep
// (WINDTUNNEL_SHARD_OUT), and does nothing otherwise.
func Write[S any](test string, defaultSeeds, maxSeeds int, seeds []Seed[S]) error {
	dir := os.Getenv("WINDTUNNEL_SHARD_OUT")
	if dir == "" {
		return nil
	}
	shard, err := simtest.CurrentShard()
	if err != nil {
		return err
	}
	path := samplesPath(dir, test)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	if err := enc.Encode(shardHeader{Test: test, Shard: shard.String(), Seeds: simtest.SeedsFor(defaultSeeds, maxSeeds)}); err != nil {
		return err
	}
	for _, s := range seeds {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Read reads a check's samples from every shard and checks that the shards
// are one sweep: the same seed count, every slice of the same n exactly
// once, every regular seed index exactly once.
func Read[S any](test string, dirs []string) ([]Seed[S], error) {
	var all []Seed[S]
	var n, seeds = -1, -1
	slicesSeen := map[int]string{}
	indices := map[int]string{}
	for _, dir := range dirs {
		path := samplesPath(dir, test)
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("shard %s has no samples of %s: %v", dir, test, err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		var hdr shardHeader
		line := 0
		for sc.Scan() {
			line++
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.DisallowUnknownFields()
			if line == 1 {
				if err := dec.Decode(&hdr); err != nil || hdr.Test != test {
					f.Close()
					return nil, fmt.Errorf("%s:1: not the samples of %s (%v)", path, test, err)
				}
				continue
			}
			var s Seed[S]
			if err := dec.Decode(&s); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			if s.Index >= 0 {
				if other, ok := indices[s.Index]; ok {
					f.Close()
					return nil, fmt.Errorf("seed index %d of %s is in two shards (%s and %s): the slices overlap", s.Index, test, other, dir)
				}
				indices[s.Index] = dir
			}
			all = append(all, s)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		sh, err := simtest.ParseShard(hdr.Shard)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		switch {
		case n >= 0 && sh.Count() != n:
			return nil, fmt.Errorf("%s is shard %s, the others are of %d: not one sweep", dir, hdr.Shard, n)
		case seeds >= 0 && hdr.Seeds != seeds:
			return nil, fmt.Errorf("%s ran %d seeds of %s, the others %d: not one sweep", dir, hdr.Seeds, test, seeds)
		}
		if other, ok := slicesSeen[sh.Index()]; ok {
			return nil, fmt.Errorf("shard %s is given twice (%s and %s)", hdr.Shard, other, dir)
		}
		slicesSeen[sh.Index()] = dir
		n, seeds = sh.Count(), hdr.Seeds
	}
	for i := range n {
		if _, ok := slicesSeen[i]; !ok {
			return nil, fmt.Errorf("shard %d/%d is missing", i, n)
		}
	}
	for i := range seeds {
		if _, ok := indices[i]; !ok {
			return nil, fmt.Errorf("seed index %d of %s is in no shard (a shard stopped early?)", i, test)
		}
	}
	// Seed order: corpus seeds first, then regular seeds by index, as an
	// unsharded run plans them.
	slices.SortStableFunc(all, func(a, b Seed[S]) int {
		switch {
		case a.Index < 0 && b.Index < 0:
			return 0
		case a.Index < 0:
			return -1
		case b.Index < 0:
			return 1
		}
		return a.Index - b.Index
	})
	return all, nil
}
