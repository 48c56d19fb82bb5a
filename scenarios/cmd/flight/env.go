package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// env is one flight's world: a schema on the shared PostgreSQL, the
// commit-log writer, one PostgreSQL and one Redis proxy per relay, and the
// relay processes.
type env struct {
	opts    Options
	schema  string
	admin   *pgx.Conn
	adminMu sync.Mutex
	writer  *flight.Writer
	toxi    *flight.Toxiproxy
	relays  []*relay
	work    string
}

// relay is one relay process and the names of its two proxies.
type relay struct {
	*flight.Proc
	pgProxy, redisProxy string
}

// setup builds the relay binary (with the mutant's overlay, if any),
// creates the schema and the proxies and starts the relays.
func setup(ctx context.Context, o Options, logTo io.Writer) (_ *env, err error) {
	e := &env{opts: o, toxi: flight.NewToxiproxy(o.ToxiAddr)}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.work, err = os.MkdirTemp("", "windtunnel-flight-"); err != nil {
		return nil, err
	}
	bin, err := buildRelay(ctx, o.Mutant, e.work)
	if err != nil {
		return nil, err
	}
	if _, err := e.toxi.Version(ctx); err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	e.schema = "wt_flight_" + tag
	if e.admin, err = pgx.Connect(ctx, o.PGURL); err != nil {
		return nil, fmt.Errorf("flight: connect to PostgreSQL: %w", err)
	}
	for _, q := range []string{"CREATE SCHEMA " + e.schema, "SET search_path TO " + e.schema, pgstore.Schema} {
		if _, err := e.admin.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("flight: %s: %w", strings.Fields(q)[0], err)
		}
	}
	if e.writer, err = flight.NewWriter(ctx, o.PGURL, e.schema); err != nil {
		return nil, err
	}
	pgHost, err := hostPort(o.PGURL)
	if err != nil {
		return nil, err
	}
	channel := "wt-flight:" + tag
	for i := range o.Relays {
		name := fmt.Sprintf("relay%d", i)
		pgp, err := e.toxi.Create(ctx, tag+"-pg-"+name, pgHost)
		if err != nil {
			return nil, err
		}
		rp, err := e.toxi.Create(ctx, tag+"-redis-"+name, o.RedisAddr)
		if err != nil {
			return nil, err
		}
		pgURL, err := withHost(o.PGURL, pgp.Listen)
		if err != nil {
			return nil, err
		}
		p, err := flight.Start(bin, name, flight.RelayConfig{PGURL: pgURL, Schema: e.schema, MaxConns: o.MaxConns,
			RedisAddr: rp.Listen, Channel: channel}, logTo)
		if err != nil {
			return nil, err
		}
		e.relays = append(e.relays, &relay{Proc: p, pgProxy: pgp.Name, redisProxy: rp.Name})
	}
	for _, r := range e.relays { // ready once it answers
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := r.Call(cctx, flight.Request{Op: flight.OpClock})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("flight: relay %s did not come up: %w", r.Name, err)
		}
	}
	return e, nil
}

// close stops the relays, removes the proxies and drops the schema.
func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range e.relays {
		_ = r.Close()
		_ = e.toxi.Delete(ctx, r.pgProxy)
		_ = e.toxi.Delete(ctx, r.redisProxy)
	}
	if e.writer != nil {
		_ = e.writer.Close(ctx)
	}
	if e.admin != nil {
		_, _ = e.admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+e.schema+" CASCADE")
		_ = e.admin.Close(ctx)
	}
	if e.work != "" {
		_ = os.RemoveAll(e.work)
	}
}

// buildRelay builds cmd relayd into dir, with the mutant applied through
// -overlay as the audit applies it (no hook in production code).
func buildRelay(ctx context.Context, mutant, dir string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", filepath.Join(dir, "relayd")}
	if mutant != "" {
		m, ok := findMutant(mutant)
		if !ok {
			return "", fmt.Errorf("flight: no catalogue mutant %q", mutant)
		}
		overlay, err := m.Apply(root, filepath.Join(dir, "mutant"))
		if err != nil {
			return "", err
		}
		args = append(args, "-overlay", overlay)
	}
	args = append(args, "./impl/edge/flight/relayd")
	cmd := exec.CommandContext(ctx, goCmd(), args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("flight: go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, "relayd"), nil
}

func findMutant(id string) (mutants.Mutant, bool) {
	for _, m := range mutants.All() {
		if m.ID == id {
			return m, true
		}
	}
	return mutants.Mutant{}, false
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, goCmd(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("flight: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("flight: run inside the windtunnel module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

// hostPort is the host:port of a PostgreSQL URL.
func hostPort(pgURL string) (string, error) {
	u, err := url.Parse(pgURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("flight: WINDTUNNEL_PG_URL must be a postgres:// URL with host:port")
	}
	if u.Port() == "" {
		return u.Host + ":5432", nil
	}
	return u.Host, nil
}

// withHost is pgURL with its host:port replaced (a relay's proxy).
func withHost(pgURL, host string) (string, error) {
	u, err := url.Parse(pgURL)
	if err != nil {
		return "", err
	}
	u.Host = host
	return u.String(), nil
}
