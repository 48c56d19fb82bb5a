package translate_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt/rtgo"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/translate"
	"github.com/windtunnel/windtunnel/translate/internal/kitchen"
)

// The committed translation of testdata/kitchen is what the translator
// makes of it today (regenerate: go run ./translate/cmd/wttranslate
// translate/testdata/kitchen translate/internal/kitchen).
func TestKitchenTranslationIsCurrent(t *testing.T) {
	files, err := translate.Dir("testdata/kitchen", translate.Options{})
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Empty(t, files[0].Issues)
	want, err := os.ReadFile("internal/kitchen/kitchen.go")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(files[0].Src))
}

// The translated kitchen computes under the simulator what the original
// computes, on every seed, and leaves no task blocked.
func TestKitchenFlies(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		var sum int
		res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, func(s *sim.Sim) {
			rtgo.Use(s)
			sum = kitchen.Run(10)
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.Equal(t, 55, sum, "seed %d", seed)
	}
	rtgo.Use(nil)
	assert.Equal(t, 55, kitchen.Run(10), "the same code on real goroutines once nothing is bound")
}

// A goroutine the translated code leaks is reported by the leak oracle,
// named after its go statement, with its wait and its line.
func TestKitchenLeakIsFound(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true}, func(s *sim.Sim) {
		rtgo.Use(s)
		kitchen.Leak()
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, sim.FailLeak, f.Kind)
	require.Len(t, f.Blocked, 1)
	assert.Equal(t, "kitchen.go:77", f.Blocked[0].Name)
	assert.Contains(t, f.Blocked[0].Wait, "chan receive")
	assert.Contains(t, f.Blocked[0].Site, "kitchen/kitchen.go:")
}

// What the translator cannot take is listed with file:line and the
// construct, and the file is not produced.
func TestUntranslatableIsReported(t *testing.T) {
	files, err := translate.Dir("testdata/bad", translate.Options{})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Nil(t, files[0].Src)
	var got []string
	for _, is := range files[0].Issues {
		got = append(got, is.String())
	}
	assert.Equal(t, []string{
		"bad.go:10: net.Dial (package net is outside what the translator maps onto the seam)",
		"bad.go:12: unsafe.Pointer(uintptr): a number turned back into a pointer needs the real address, which the translation replaces",
		"bad.go:20: a value of the named channel type sink used where the translation cannot keep it (it becomes a struct holding the channel)",
		"bad.go:20: a value of the named channel type sink used where the translation cannot keep it (it becomes a struct holding the channel)",
	}, got)
}

// ctx.Done() kept as a value wakes its receivers when the context ends, and
// stand-in addresses keep pointers apart, on every seed, leaving no task
// blocked.
func TestKitchenIdentityFlies(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var ok bool
		res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, func(s *sim.Sim) {
			rtgo.Use(s)
			ok = kitchen.Identity()
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.True(t, ok, "seed %d", seed)
	}
	rtgo.Use(nil)
	assert.True(t, kitchen.Identity(), "the same code on real goroutines")
}

// A named channel type with a method keeps its method and its channel.
func TestKitchenNamedChanFlies(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var got int
		res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, func(s *sim.Sim) {
			rtgo.Use(s)
			got = kitchen.Named()
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.Equal(t, 7, got, "seed %d", seed)
	}
	rtgo.Use(nil)
	assert.Equal(t, 7, kitchen.Named(), "the same code on real goroutines")
}

// A map keyed by pointers is ranged over in an order the seed fixes: the
// same seed gives the same order.
func TestKitchenPointerMapOrderIsSeeded(t *testing.T) {
	order := func(seed uint64) []int {
		var got []int
		res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, func(s *sim.Sim) {
			rtgo.Use(s)
			got = kitchen.Order()
		})
		require.NoError(t, res.Err, "seed %d", seed)
		return got
	}
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 10; seed++ {
		one := order(seed)
		assert.ElementsMatch(t, []int{0, 1, 2, 3, 4}, one)
		assert.Equal(t, one, order(seed), "seed %d gave another order", seed)
		orders[fmt.Sprint(one)] = true
	}
	assert.Greater(t, len(orders), 1, "every seed gave the same order")
	rtgo.Use(nil)
}
