package flight

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
)

const fakeRelayEnv = "WINDTUNNEL_FLIGHT_FAKE_RELAY"

// TestMain lets the test binary play a relay (fakeRelay) when the client
// test starts it as one.
func TestMain(m *testing.M) {
	if os.Getenv(fakeRelayEnv) == "1" {
		fakeRelay()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeRelay answers granted with the parity of the user's last byte, each
// after a delay that scrambles the answers' order.
func fakeRelay() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req Request
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(req.User[15]%5) * time.Millisecond)
			b, _ := json.Marshal(Response{ID: req.ID, OK: req.User[15]%2 == 1})
			mu.Lock()
			_, _ = out.Write(append(b, '\n'))
			_ = out.Flush()
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// The client matches each answer to its request however the relay orders
// them, and a relay that has exited fails calls instead of hanging them.
func TestProcMatchesAnswersToCalls(t *testing.T) {
	t.Setenv(fakeRelayEnv, "1")
	p, err := Start(os.Args[0], "fake", RelayConfig{}, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := authz.NewID('u', uint64(i))
			resp, err := p.Call(ctx, Request{Op: OpGranted, User: u})
			assert.NoError(t, err)
			assert.Equal(t, i%2 == 1, resp.OK, "call %d got another call's answer", i)
		}()
	}
	wg.Wait()
	require.NoError(t, p.Close())
	_, err = p.Call(ctx, Request{Op: OpClock})
	assert.Error(t, err, "a call to an exited relay fails")
}

// Serve refuses a configuration that names no servers, before connecting.
func TestServeNeedsItsServers(t *testing.T) {
	err := Serve(context.Background(), RelayConfig{}, nil, nil)
	assert.ErrorContains(t, err, "needs PGURL")
}
