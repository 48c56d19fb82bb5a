package p

import "testing"

const underRace = false // a mention outside every test gates nothing

func TestGated(t *testing.T) {
	if underRace {
		t.Skip("smaller under -race")
	}
}

func TestPlain(t *testing.T) {}

func helper() bool { return underRace }

func TestAfterAHelper(t *testing.T) {
	_ = helper()
}

func TestUnderRaceInItsName(t *testing.T) {}

func TestAlsoGated(t *testing.T) {
	n := 10
	if UnderRace {
		n = 1
	}
	_ = n
}

const UnderRace = underRace
