package sim

import "github.com/windtunnel/windtunnel/sim/internal/protocol"

// withReplay is cfg with the protocol's options o, as protocol.ConfigOf
// sets them.
func withReplay(cfg Config, o protocol.Options) Config {
	cfg.replay = o
	return cfg
}

// tailLines and tailAbout are a result's trace tail and its header.
func (r Result) tailLines() []string { l, _ := r.traceTail(); return l }
func (r Result) tailAbout() string   { _, a := r.traceTail(); return a }
