package tether

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is one Server-Sent Event.
type Event struct {
	// Type is the event's name (status, removed, sessions, fleet), or
	// "message" when it named none.
	Type string
	// ID is the stream's last event id when it was dispatched (a session's
	// status event carries the history's revision).
	ID string
	// Data is the event's data, its lines joined by "\n".
	Data string
}

// maxEventLine caps one line of a stream (a status event is one line of
// JSON; the largest real ones are far below).
const maxEventLine = 16 << 20

// EventReader reads a text/event-stream as the HTML standard parses one:
// lines end in LF, CRLF or CR; a line starting with ':' is a comment (the
// service's heartbeats); `event`, `data`, `id` and `retry` fields; a blank
// line dispatches; an event cut off by the end of the stream is dropped.
type EventReader struct {
	r      *bufio.Reader
	lastID string
	retry  time.Duration
	// pendingCR: the last line ended in CR, so an LF right after it is
	// that line's end, not an empty line.
	pendingCR bool
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// LastEventID is the id the stream set last (what a reconnection sends
// as Last-Event-ID).
func (er *EventReader) LastEventID() string { return er.lastID }

// Retry is the reconnection delay the stream asked for (`retry:`), or 0.
func (er *EventReader) Retry() time.Duration { return er.retry }

func (er *EventReader) line() (string, error) {
	var buf []byte
	for {
		b, err := er.r.ReadByte()
		if err != nil {
			return "", err
		}
		if er.pendingCR {
			er.pendingCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return string(buf), nil
		case '\r':
			er.pendingCR = true
			return string(buf), nil
		}
		if len(buf) >= maxEventLine {
			return "", fmt.Errorf("tether: an event stream line is over %d bytes", maxEventLine)
		}
		buf = append(buf, b)
	}
}

// Next returns the next event; io.EOF when the stream ended.
func (er *EventReader) Next() (Event, error) {
	var typ string
	var data strings.Builder
	hasData := false
	for {
		line, err := er.line()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		if line == "" {
			if !hasData {
				typ = ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			d := data.String()
			return Event{Type: typ, ID: er.lastID, Data: strings.TrimSuffix(d, "\n")}, nil
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, ""
		if i := strings.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], strings.TrimPrefix(line[i+1:], " ")
		}
		switch name {
		case "event":
			typ = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				er.lastID = value
			}
		case "retry":
			if n, err := strconv.ParseUint(value, 10, 32); err == nil && value != "" {
				er.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}

// FollowOptions shape how a stream is followed.
type FollowOptions struct {
	// LastEventID resumes after an event an earlier follow saw: sent as
	// Last-Event-ID on the first connection too.
	LastEventID string
	// MinBackoff is the first wait before reconnecting (250 ms unless
	// said; a stream's `retry:` replaces it); each failure in a row
	// doubles it, up to MaxBackoff (10 s unless said).
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout: nothing at all (no event, no heartbeat) for this long
	// and the connection is taken for dead and opened again. The service
	// sends a heartbeat every 10 s on an idle stream; 35 s unless said.
	IdleTimeout time.Duration
	// OnReconnect, when set, is told before each wait to reconnect: which
	// reconnection in a row it is, how long the wait, and why.
	OnReconnect func(attempt int, wait time.Duration, err error)
}

func (o FollowOptions) withDefaults() FollowOptions {
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = 10 * time.Second
		if o.MaxBackoff < o.MinBackoff {
			o.MaxBackoff = o.MinBackoff
		}
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 35 * time.Second
	}
	return o
}

// errStop ends a follow without an error (the session was removed).
var errStop = errors.New("stop")

// Follow opens the event stream at path (an /api/v1/… stream route) and
// calls fn for every event, opening it again whenever it ends or fails
// for a reason that may pass (the connection dropped, nothing arrived for
// IdleTimeout, 429 or 5xx), with backoff and Last-Event-ID. It returns
// when ctx ends (ctx.Err()), when fn returns an error (that error), or on
// a refusal that asking again cannot change (a *ResponseError: 401
// unauthorized, 403 forbidden, 404 not_found, 421 bad_host, …).
//
// A stream of whole states (every status event is the session's whole
// state) may repeat the state it last sent when it is opened again; the
// session follow drops an event whose id is the one it delivered last.
func (c *Client) Follow(ctx context.Context, path string, opts FollowOptions, fn func(Event) error) error {
	opts = opts.withDefaults()
	lastID := opts.LastEventID
	var retry time.Duration
	failures := 0
	for {
		delivered, id, serverRetry, err := c.followOnce(ctx, path, lastID, opts.IdleTimeout, fn)
		if id != "" {
			lastID = id
		}
		if serverRetry > 0 {
			retry = serverRetry
		}
		if errors.Is(err, errStop) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var refused *ResponseError
		if errors.As(err, &refused) && !refused.Temporary() {
			return err
		}
		var callback *callbackError
		if errors.As(err, &callback) {
			return callback.err
		}
		if delivered {
			failures = 0
		}
		failures++
		wait := opts.MinBackoff
		if retry > 0 {
			wait = retry
		}
		for i := 1; i < failures && wait < opts.MaxBackoff; i++ {
			wait *= 2
		}
		if wait > opts.MaxBackoff {
			wait = opts.MaxBackoff
		}
		if errors.As(err, &refused) && refused.RetryAfter > wait {
			wait = refused.RetryAfter
		}
		// Up to a fifth more, so that many followers do not return at once.
		wait += time.Duration(rand.Int63n(int64(wait)/5 + 1))
		if err == nil {
			err = io.EOF
		}
		if opts.OnReconnect != nil {
			opts.OnReconnect(failures, wait, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// followOnce reads one connection: whether it delivered an event, the last
// id it saw, the retry it asked for, and why it ended.
func (c *Client) followOnce(ctx context.Context, path, lastID string, idle time.Duration, fn func(Event) error) (bool, string, time.Duration, error) {
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := c.request(connCtx, http.MethodGet, path, nil, true)
	if err != nil {
		return false, "", 0, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	watchdog := newWatchdog(idle, cancel)
	defer watchdog.stop()
	resp, err := c.http.Do(req)
	if err != nil {
		return false, "", 0, watchdog.explain(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, "", 0, responseError(resp, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, "", 0, &ResponseError{StatusCode: resp.StatusCode}
	}
	reader := NewEventReader(&activity{r: resp.Body, w: watchdog})
	reader.lastID = lastID
	delivered := false
	for {
		ev, err := reader.Next()
		if err != nil {
			return delivered, reader.lastID, reader.retry, watchdog.explain(err)
		}
		if err := fn(ev); err != nil {
			if errors.Is(err, errStop) {
				return true, reader.lastID, reader.retry, err
			}
			return true, reader.lastID, reader.retry, &callbackError{err}
		}
		delivered = true
	}
}

// watchdog cancels a connection that has been silent for its limit.
type watchdog struct {
	mu    sync.Mutex
	timer *time.Timer
	limit time.Duration
	fired bool
}

func newWatchdog(limit time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{limit: limit}
	w.timer = time.AfterFunc(limit, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	return w
}

func (w *watchdog) kick() { w.timer.Reset(w.limit) }
func (w *watchdog) stop() { w.timer.Stop() }

func (w *watchdog) explain(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired {
		return fmt.Errorf("nothing arrived for %s (no event, no heartbeat): %w", w.limit, err)
	}
	return err
}

type activity struct {
	r io.Reader
	w *watchdog
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.w.kick()
	}
	return n, err
}

// SessionUpdate is one event of a session's stream.
type SessionUpdate struct {
	// ID is the event's id: the history's revision.
	ID string
	// Status is the session's whole state; nil when Removed.
	Status *SessionStatus
	// Removed: the session is gone from the service; the follow ends.
	Removed bool
}

// FollowSession follows `GET /api/v1/sessions/{id}/events`: the
// session's whole state at once, then again at every change (a slow
// reader skips to the latest; nothing queues). fn sees each state once:
// after a reconnection the repeated state (same id) is dropped. It ends
// with nil after the removed event, and otherwise as Follow does.
func (c *Client) FollowSession(ctx context.Context, id string, opts FollowOptions, fn func(SessionUpdate) error) error {
	delivered := opts.LastEventID
	return c.Follow(ctx, sessionPath(id, "/events"), opts, func(ev Event) error {
		switch ev.Type {
		case "status":
			if ev.ID != "" && ev.ID == delivered {
				return nil
			}
			var doc SessionStatus
			if err := Decode([]byte(ev.Data), &doc); err != nil {
				return fmt.Errorf("tether: a status event of %s: %w", id, err)
			}
			delivered = ev.ID
			return fn(SessionUpdate{ID: ev.ID, Status: &doc})
		case "removed":
			if err := fn(SessionUpdate{ID: ev.ID, Removed: true}); err != nil {
				return err
			}
			return errStop
		}
		return nil
	})
}

// FollowSessions follows `GET /api/v1/events`: the session list at once,
// then again whenever it changed.
func (c *Client) FollowSessions(ctx context.Context, opts FollowOptions, fn func(*SessionList) error) error {
	var last []byte
	return c.Follow(ctx, "/api/v1/events", opts, func(ev Event) error {
		if ev.Type != "sessions" {
			return nil
		}
		if bytes.Equal(last, []byte(ev.Data)) {
			return nil
		}
		var doc SessionList
		if err := Decode([]byte(ev.Data), &doc); err != nil {
			return fmt.Errorf("tether: a sessions event: %w", err)
		}
		last = []byte(ev.Data)
		return fn(&doc)
	})
}
