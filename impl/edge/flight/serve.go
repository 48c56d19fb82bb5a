package flight

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
	authzrelay "github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// Limits of a relay process.
const (
	// MaxInFlight bounds the requests a relay runs at once; the reader
	// waits for a slot before reading the next line.
	MaxInFlight = 256
	// CallTimeout bounds one request's call into the wiring.
	CallTimeout = 30 * time.Second
	// MaxLine bounds one request line.
	MaxLine = 1 << 16
)

// RelayConfig is what a relay process connects to. The addresses are the
// relay's own fault proxies when the driver interposes them.
type RelayConfig struct {
	PGURL     string // PostgreSQL connection string
	Schema    string // the flight's schema (pgstore.Config.Schema)
	MaxConns  int    // the relay's pool size (0: pgstore's default)
	RedisAddr string // host:port
	Channel   string // the invalidation channel
	Logger    *slog.Logger
}

// Serve runs one relay: its own pgxpool, its own Redis subscription, the
// production wiring over them with rt.Real(), answering requests from in
// on out until in ends or ctx is done.
func Serve(ctx context.Context, cfg RelayConfig, in io.Reader, out io.Writer) error {
	if cfg.PGURL == "" || cfg.RedisAddr == "" || cfg.Schema == "" || cfg.Channel == "" {
		return errors.New("flight: a relay needs PGURL, Schema, RedisAddr and Channel")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	store, err := pgstore.Open(ctx, cfg.PGURL, pgstore.Config{Schema: cfg.Schema, MaxConns: cfg.MaxConns})
	if err != nil {
		return err
	}
	defer store.Close()
	pool := &timedPool{Pool: store}
	client := redis.NewClient(&redis.Options{Addr: cfg.RedisAddr})
	defer client.Close()
	pub, err := redisbus.NewPublisher(client, cfg.Channel)
	if err != nil {
		return err
	}
	wiring, err := authzrelay.New(rt.Real(), pool, pub, authzrelay.Config{})
	if err != nil {
		return err
	}
	sub, err := redisbus.Subscribe(ctx, client, wiring, redisbus.SubscriberConfig{Channel: cfg.Channel, Logger: cfg.Logger})
	if err != nil {
		return err
	}
	defer sub.Close()
	s := &server{wiring: wiring, pool: pool, store: store, sub: sub, out: bufio.NewWriter(out)}
	return s.loop(ctx, in)
}

type server struct {
	wiring *authzrelay.Relay
	pool   *timedPool
	store  *pgstore.Store
	sub    *redisbus.Subscriber

	mu  sync.Mutex
	out *bufio.Writer
}

func (s *server) loop(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	slots := make(chan struct{}, MaxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("flight: bad request line %q: %w", truncate(sc.Text()), err)
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			s.reply(s.handle(ctx, req))
		}()
	}
	return sc.Err()
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func (s *server) handle(ctx context.Context, req Request) Response {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	resp := Response{ID: req.ID}
	var err error
	switch req.Op {
	case OpGranted:
		resp.Invoke = time.Now().UnixNano()
		resp.OK, err = s.wiring.OC.Granted(ctx, req.Community, req.User, req.Channel)
		resp.Return = time.Now().UnixNano()
	case OpMember:
		resp.Invoke = time.Now().UnixNano()
		resp.OK, err = s.wiring.MS.IsMember(ctx, req.Community, req.User, req.Channel)
		resp.Return = time.Now().UnixNano()
	case OpChanged:
		if req.Msg == nil {
			err = errors.New("changed without msg")
			break
		}
		resp.Invoke = time.Now().UnixNano()
		err = s.wiring.Changed(ctx, *req.Msg)
		resp.Return = time.Now().UnixNano()
		resp.OK = err == nil
	case OpInvalidate:
		if req.Msg == nil {
			err = errors.New("invalidate without msg")
			break
		}
		if err = req.Msg.Validate(); err == nil {
			s.wiring.Invalidate(*req.Msg)
			resp.OK = true
		}
	case OpClock:
		resp.Clock = time.Now().UnixNano()
		resp.OK = true
	case OpStats:
		m := s.sub.Metrics().Snapshot()
		pm := s.store.Metrics().Snapshot()
		resp.Stats = &Stats{
			Connects:      pm[pgstore.MetricConnects],
			ConnectMicros: pm[pgstore.MetricConnectMicros],
			Pings:         pm[pgstore.MetricIdlePings],
			AcquireWaits:  s.pool.waits.snapshot(),
			Statements:    s.pool.stmts.snapshot(),
			MemberReads:   s.pool.memberReads.snapshot(),
			StatementErrs: s.pool.stmtErrs.get(),
			AcquireErrs:   s.pool.acquireErrs.snapshot(),
			Subscriptions: m[redisbus.MetricSubscriptions],
			Subscribed:    m[redisbus.MetricSubscribed],
			Received:      m[redisbus.MetricReceived],
			ReceiveErrors: m[redisbus.MetricReceiveErrors],
		}
		resp.OK = true
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		resp.Err = err.Error()
	}
	return resp
}

func (s *server) reply(r Response) {
	b, err := json.Marshal(r)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"id":%d,"err":%q}`, r.ID, err.Error()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.out.Write(append(b, '\n'))
	_ = s.out.Flush()
}
