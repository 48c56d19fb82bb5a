package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// EnvToxiproxy names the Toxiproxy server's API address (host:port), set by
// scripts/toxiproxy.sh.
const EnvToxiproxy = "WINDTUNNEL_TOXIPROXY_ADDR"

// Toxiproxy is a client of a Toxiproxy server's HTTP API: one TCP proxy per
// relay and server, and the toxics that make the faults.
type Toxiproxy struct {
	Addr string // host:port of the API
	hc   http.Client
}

// NewToxiproxy returns a client of the API at addr.
func NewToxiproxy(addr string) *Toxiproxy {
	return &Toxiproxy{Addr: addr, hc: http.Client{Timeout: 10 * time.Second}}
}

// Proxy is one proxy as the API describes it.
type Proxy struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

// Toxic is one fault on a proxy. Stream is "downstream" (server to relay)
// or "upstream"; Toxicity the probability it applies to a connection.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"` // latency, reset_peer, timeout, limit_data, ...
	Stream     string         `json:"stream"`
	Toxicity   float64        `json:"toxicity"`
	Attributes map[string]int `json:"attributes"`
}

func (t *Toxiproxy) do(ctx context.Context, method, path string, body any, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+t.Addr+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.hc.Do(req)
	if err != nil {
		return fmt.Errorf("toxiproxy %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Create makes a proxy from a free loopback port to upstream and returns
// it with the port Toxiproxy chose.
func (t *Toxiproxy) Create(ctx context.Context, name, upstream string) (Proxy, error) {
	var p Proxy
	err := t.do(ctx, http.MethodPost, "/proxies", Proxy{Name: name, Listen: "127.0.0.1:0", Upstream: upstream, Enabled: true}, &p)
	return p, err
}

// SetEnabled enables or disables a proxy. Disabling closes every
// connection through it and refuses new ones: a connection reset, and a
// server unreachable until it is enabled again.
func (t *Toxiproxy) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return t.do(ctx, http.MethodPost, "/proxies/"+name, map[string]bool{"enabled": enabled}, nil)
}

// AddToxic adds a toxic to a proxy.
func (t *Toxiproxy) AddToxic(ctx context.Context, proxy string, x Toxic) error {
	return t.do(ctx, http.MethodPost, "/proxies/"+proxy+"/toxics", x, nil)
}

// RemoveToxic removes a toxic from a proxy.
func (t *Toxiproxy) RemoveToxic(ctx context.Context, proxy, name string) error {
	return t.do(ctx, http.MethodDelete, "/proxies/"+proxy+"/toxics/"+name, nil, nil)
}

// Delete removes a proxy.
func (t *Toxiproxy) Delete(ctx context.Context, name string) error {
	return t.do(ctx, http.MethodDelete, "/proxies/"+name, nil, nil)
}

// Version checks the server answers and returns its version.
func (t *Toxiproxy) Version(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+t.Addr+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("toxiproxy at %s: %w", t.Addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return string(bytes.TrimSpace(b)), nil
}
