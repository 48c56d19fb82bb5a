package simdb

import (
	"errors"
	"fmt"
	"time"
)

// TransientError is a randomly injected database failure (Config's
// ReadErrorProb and WriteErrorProb): the kind of error a real client retries
// or propagates, never a wrong answer. Recognise it with IsTransient or
// errors.As.
type TransientError struct {
	Statement string    // statement name, or the write's "what"
	Write     bool      // true when a write failed (and did not commit)
	Conn      int       // connection number, 0 for a write
	At        time.Time // the instant the statement started
}

func (e *TransientError) Error() string {
	if e.Write {
		return fmt.Sprintf("simdb: transient error: write %q started at %s did not commit", e.Statement, e.At.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("simdb: transient error: statement %q on connection %d started at %s failed", e.Statement, e.Conn, e.At.Format(time.RFC3339Nano))
}

// IsTransient reports whether err is, or wraps, a *TransientError.
func IsTransient(err error) bool {
	var te *TransientError
	return errors.As(err, &te)
}

// ErrPoolQueueFull is returned by Acquire when Config.MaxWaiters callers
// already wait for a connection.
var ErrPoolQueueFull = errors.New("simdb: too many callers waiting for a connection")

// ErrUnknownStatement is wrapped by Query's error for a statement name that
// Config.Statements does not declare.
var ErrUnknownStatement = errors.New("simdb: unknown statement")
