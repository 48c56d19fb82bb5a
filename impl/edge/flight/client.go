package flight

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// StopTimeout bounds how long Close waits for a relay to exit after its
// input is closed, before killing it.
const StopTimeout = 10 * time.Second

// Proc is the driver's side of one relay process. Call is safe for
// concurrent use.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	in   io.WriteCloser

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan Response
	dead    error // set when the relay's output ended
	done    chan struct{}
}

// Start starts the relay binary with cfg and returns once its process
// runs; the relay answers once it has connected (its first answer). Its
// stderr goes to logTo (nil: discarded).
func Start(binary, name string, cfg RelayConfig, logTo io.Writer) (*Proc, error) {
	cmd := exec.Command(binary, "-pg", cfg.PGURL, "-schema", cfg.Schema, "-max-conns", fmt.Sprint(cfg.MaxConns),
		"-redis", cfg.RedisAddr, "-channel", cfg.Channel)
	cmd.Stderr = logTo
	cmd.Env = os.Environ()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("flight: start relay %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, in: in, waiting: map[uint64]chan Response{}, done: make(chan struct{})}
	go p.read(out)
	return p, nil
}

func (p *Proc) read(out io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20) // OpStats carries up to 2×MaxSamples numbers
	for sc.Scan() {
		var r Response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		p.mu.Lock()
		ch := p.waiting[r.ID]
		delete(p.waiting, r.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	err := sc.Err()
	if err == nil {
		err = errors.New("its output ended")
	}
	p.mu.Lock()
	p.dead = fmt.Errorf("flight: relay %s: %w", p.Name, err)
	for id, ch := range p.waiting {
		close(ch)
		delete(p.waiting, id)
	}
	p.mu.Unlock()
}

// Call sends req (its ID is assigned here) and waits for the answer, ctx's
// end or the relay's death.
func (p *Proc) Call(ctx context.Context, req Request) (Response, error) {
	ch := make(chan Response, 1)
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		return Response{}, p.dead
	}
	p.nextID++
	req.ID = p.nextID
	p.waiting[req.ID] = ch
	b, err := json.Marshal(req)
	if err == nil {
		_, err = p.in.Write(append(b, '\n'))
	}
	if err != nil {
		delete(p.waiting, req.ID)
		p.mu.Unlock()
		return Response{}, fmt.Errorf("flight: relay %s: send: %w", p.Name, err)
	}
	p.mu.Unlock()
	select {
	case r, ok := <-ch:
		if !ok {
			p.mu.Lock()
			defer p.mu.Unlock()
			return Response{}, p.dead
		}
		return r, nil
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.waiting, req.ID)
		p.mu.Unlock()
		return Response{}, ctx.Err()
	}
}

// Close closes the relay's input, waits up to StopTimeout for it to exit,
// then kills it.
func (p *Proc) Close() error {
	_ = p.in.Close()
	exited := make(chan error, 1)
	go func() { <-p.done; exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(StopTimeout):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("flight: relay %s did not exit within %v; killed: %v", p.Name, StopTimeout, <-exited)
	}
}
