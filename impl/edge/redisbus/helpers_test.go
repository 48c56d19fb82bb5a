package redisbus_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/testenv"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// client returns a Redis client on WINDTUNNEL_REDIS_ADDR (skipping or
// failing as testenv decides), closed when the test ends.
func client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(testenv.RedisOptions(t))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// channel returns a channel name no other test uses.
func channel() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "wt-test:" + hex.EncodeToString(b[:])
}

// recorder is an authz.Invalidator that records what it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []authz.Message
}

func (r *recorder) Invalidate(m authz.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}

func (r *recorder) got() []authz.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]authz.Message(nil), r.msgs...)
}

// waitFor waits until n messages were recorded, failing after 5 s.
func (r *recorder) waitFor(t *testing.T, n int) []authz.Message {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.got()) >= n }, 5*time.Second, 5*time.Millisecond,
		"want %d messages, have %v", n, r.got())
	return r.got()
}

func msg(kind authz.Kind, n uint64) authz.Message {
	m := authz.Message{Kind: kind, CommunityID: authz.NewID('k', n)}
	switch kind {
	case authz.KindMembership:
		m.UserID, m.ChannelID = authz.NewID('u', n), authz.NewID('c', n)
	case authz.KindVisibility, authz.KindChannelDeleted:
		m.ChannelID = authz.NewID('c', n)
	}
	return m
}

// syncBuffer is a log sink safe for the subscriber's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freezer is a TCP proxy to Redis whose existing connections can be frozen:
// they stay open but forward nothing, like a connection through a network
// that silently dropped it. Connections made after the freeze forward
// normally.
type freezer struct {
	ln    net.Listener
	mu    sync.Mutex
	gates []*atomic.Bool // one per proxied connection: frozen or not
	conns []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &freezer{ln: ln}
	t.Cleanup(func() {
		_ = ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			gate := new(atomic.Bool)
			f.mu.Lock()
			f.conns = append(f.conns, c, up)
			f.gates = append(f.gates, gate)
			f.mu.Unlock()
			go pipe(up, c, gate)
			go pipe(c, up, gate)
		}
	}()
	return f
}

func pipe(dst, src net.Conn, frozen *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			_ = dst.Close()
			return
		}
		if frozen.Load() {
			continue // swallowed: the peer hears nothing, and nothing closes
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (f *freezer) addr() string { return f.ln.Addr().String() }

// freeze stops forwarding on every connection open now.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.gates {
		g.Store(true)
	}
}
