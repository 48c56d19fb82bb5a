package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// ShardMeta is what one shard of an audit sweep ran: the commit and the
// claims it judged, its slice of every claim check's seeds, and the mutants
// it ran (mutant i belongs to shard i mod n). Merge refuses shards that do
// not make up one sweep.
type ShardMeta struct {
	Commit      string         `json:"commit"`
	ClaimsHash  string         `json:"claims_sha256"`
	Shard       string         `json:"shard"`
	Run         string         `json:"run"` // the -run pattern of the claim checks
	Seeds       int            `json:"seeds"`
	MutantSeeds int            `json:"mutant_seeds"`
	Mutants     []MutantResult `json:"mutants"`
	MutantIDs   []string       `json:"mutant_ids"` // every mutant of the sweep, in catalogue order
}

// ClaimsHash identifies the claims a sweep judged.
func ClaimsHash() string {
	sum := sha256.Sum256([]byte(claims.Markdown()))
	return hex.EncodeToString(sum[:])
}

// ShardMutant reports whether mutant i of the catalogue belongs to shard.
func ShardMutant(i int, shard simtest.Shard) bool { return i%shard.Count() == shard.Index() }

// WriteShardMeta writes dir/shard.json.
func WriteShardMeta(dir string, m ShardMeta) error {
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "shard.json"), append(js, '\n'), 0o644)
}

// ReadShards reads and checks the shards of one sweep: the same commit,
// claims, seeds and mutants, each slice of the same n exactly once. It
// returns the mutant results of all of them in catalogue order.
func ReadShards(dirs []string) ([]ShardMeta, []MutantResult, error) {
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("merge: no shard directories given")
	}
	var metas []ShardMeta
	seen := map[int]string{}
	n := -1
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "shard.json"))
		if err != nil {
			return nil, nil, fmt.Errorf("merge: %s is not an audit shard: %v", dir, err)
		}
		var m ShardMeta
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, nil, fmt.Errorf("merge: %s/shard.json: %v", dir, err)
		}
		sh, err := simtest.ParseShard(m.Shard)
		if err != nil {
			return nil, nil, fmt.Errorf("merge: %s: %v", dir, err)
		}
		if len(metas) > 0 {
			first := metas[0]
			switch {
			case m.Commit != first.Commit:
				return nil, nil, fmt.Errorf("merge: %s is from commit %s, %s from %s", dir, m.Commit, dirs[0], first.Commit)
			case m.ClaimsHash != first.ClaimsHash:
				return nil, nil, fmt.Errorf("merge: %s judged another CLAIMS.md than %s", dir, dirs[0])
			case m.Run != first.Run:
				return nil, nil, fmt.Errorf("merge: %s ran the claim checks matching %q, %s those matching %q", dir, m.Run, dirs[0], first.Run)
			case m.Seeds != first.Seeds || m.MutantSeeds != first.MutantSeeds:
				return nil, nil, fmt.Errorf("merge: %s ran %d/%d seeds, %s %d/%d", dir, m.Seeds, m.MutantSeeds, dirs[0], first.Seeds, first.MutantSeeds)
			case !slices.Equal(m.MutantIDs, first.MutantIDs):
				return nil, nil, fmt.Errorf("merge: %s ran another mutant catalogue than %s", dir, dirs[0])
			case sh.Count() != n:
				return nil, nil, fmt.Errorf("merge: %s is shard %s, the others are of %d", dir, m.Shard, n)
			}
		}
		if other, ok := seen[sh.Index()]; ok {
			return nil, nil, fmt.Errorf("merge: shard %s is given twice (%s and %s)", m.Shard, other, dir)
		}
		seen[sh.Index()] = dir
		n = sh.Count()
		metas = append(metas, m)
	}
	for i := range n {
		if _, ok := seen[i]; !ok {
			return nil, nil, fmt.Errorf("merge: shard %d/%d is missing", i, n)
		}
	}
	byID := map[string]MutantResult{}
	for _, m := range metas {
		for _, r := range m.Mutants {
			if _, dup := byID[r.ID]; dup {
				return nil, nil, fmt.Errorf("merge: mutant %s was run by two shards", r.ID)
			}
			byID[r.ID] = r
		}
	}
	var out []MutantResult
	for _, id := range metas[0].MutantIDs {
		r, ok := byID[id]
		if !ok {
			return nil, nil, fmt.Errorf("merge: mutant %s was run by no shard", id)
		}
		out = append(out, r)
	}
	return metas, out, nil
}
