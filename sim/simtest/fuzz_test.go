package simtest

import (
	"strings"
	"testing"
)

// FuzzReplayFile: the replay parser never panics, bounds its errors, and a
// file it accepts writes back to the same decisions.
func FuzzReplayFile(f *testing.F) {
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 2\n0 1\n"))
	f.Add([]byte("windtunnel decisions v1 seed=0x1 strategy=random\n0 1\n"))
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\n"))
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime -1s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 1\n0\n"))
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 99999999999\n"))
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices 2\nkeeps 1 1\nkeeptasks 2\ntask \"main\"\ntask \"client 1\"\ndecisions 1\n0x1 0x2\n1\n0\n0 1 1 0\n0\n"))
	f.Add([]byte(replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 2\n0 1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := parseReplay(data)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("an error of %d bytes: %.80q", len(err.Error()), err.Error())
			}
			return
		}
		if len(rf.Decisions) == 0 {
			t.Fatal("accepted a file without decisions")
		}
		path := t.TempDir() + "/r.txt"
		if err := writeReplay(path, *rf); err != nil {
			t.Fatal(err)
		}
		back, err := readReplay(path)
		if err != nil {
			t.Fatalf("a written replay file does not read back: %v", err)
		}
		if len(back.Decisions) != len(rf.Decisions) || back.Seed != rf.Seed || back.StepTime != rf.StepTime {
			t.Fatalf("round trip changed the file: %+v vs %+v", back, rf)
		}
	})
}

// FuzzCorpus: the corpus parser never panics and bounds its errors.
func FuzzCorpus(f *testing.F) {
	f.Add("0x5eed  # note\n42\n\n# comment only\n")
	f.Add("zz\n")
	f.Add(strings.Repeat("1", 5000))
	f.Fuzz(func(t *testing.T, text string) {
		seeds, err := parseCorpus(strings.NewReader(text), "c.seeds")
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(seeds) > maxCorpusSeeds {
			t.Fatalf("%d seeds, above the limit", len(seeds))
		}
	})
}
