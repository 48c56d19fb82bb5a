package simtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The decision file format: a header line, then task ids separated by
// whitespace. The header names what the file is so a wrong file is a clear
// error rather than a silent divergence.
const decisionsHeader = "windtunnel decisions v1"

func writeDecisions(path string, seed uint64, strategy string, ds []int32) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed=%#x strategy=%s\n", decisionsHeader, seed, strategy)
	for i, d := range ds {
		b.WriteString(strconv.Itoa(int(d)))
		if i%32 == 31 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readDecisions(path string) ([]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read decision file: %v", err)
	}
	header, body, _ := strings.Cut(string(data), "\n")
	if !strings.HasPrefix(header, decisionsHeader) {
		return nil, fmt.Errorf("%s is not a decision file (its first line is not %q)", path, decisionsHeader)
	}
	var ds []int32
	for i, f := range strings.Fields(body) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: decision %d is %q, not a task id", path, i+1, f)
		}
		ds = append(ds, int32(v))
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%s holds no decisions", path)
	}
	return ds, nil
}

// The corpus: seeds that once failed, one per line ("0x5eed  # note"), in
// testdata/windtunnel/<TopLevelTest>.seeds of the test's package. They are
// replayed before the regular seeds on every run, so a fixed bug stays
// fixed.
func corpusPath(topTest string) string {
	return filepath.Join("testdata", "windtunnel", topTest+".seeds")
}

func readCorpus(topTest string) ([]uint64, error) {
	f, err := os.Open(corpusPath(topTest))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var seeds []uint64
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := ParseSeed(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", corpusPath(topTest), n, err)
		}
		if !slices.Contains(seeds, v) {
			seeds = append(seeds, v)
		}
	}
	return seeds, sc.Err()
}

func appendCorpus(topTest string, seed uint64, note string) error {
	have, err := readCorpus(topTest)
	if err != nil {
		return err
	}
	if slices.Contains(have, seed) {
		return nil
	}
	p := corpusPath(topTest)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%#x  # %s\n", seed, note)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
