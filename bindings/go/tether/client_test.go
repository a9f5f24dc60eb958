package tether_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tether.dev/bindings/go/tether"
)

const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func status(revision int) string {
	return fmt.Sprintf(`{"schema_version":1,"actions":false,"history":{"schema_version":1,"task_id":"t","session_id":"s:1","revision":%d,"current_attempt_id":null,"attempts":[]},"attempts":[]}`, revision)
}

func writeError(w http.ResponseWriter, code int, word, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":%q,"message":%q}`, word, message)
}

// GIVEN a service WHEN the client asks for documents THEN it sends the
// bearer token on API routes only, the exact Host of its base URL, no
// Origin, and decodes the answers; the session id is one path segment.
func TestTheClientSendsTokenHostAndNoOrigin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]http.Header{}
	hosts := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.EscapedPath()] = r.Header.Clone()
		hosts[r.URL.EscapedPath()] = r.Host
		mu.Unlock()
		switch r.URL.EscapedPath() {
		case "/api/v1/sessions":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"schema_version":1,"actions":false,"sessions":[]}`)
		case "/api/v1/sessions/s:1%2Fx":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, status(4))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><script type="application/json" id="display">{"statuses":[],"states":[],"steps":[{"key":"configured","label":"Configured"}],"stages":[]}</script></html>`)
		default:
			writeError(w, 404, "not_found", "no such resource")
		}
	}))
	defer srv.Close()
	c, err := tether.NewClient(srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.Session(ctx, "s:1/x")
	if err != nil {
		t.Fatal(err)
	}
	if rev, _ := st.History.Revision.Get(); rev != 4 {
		t.Fatalf("revision %d", rev)
	}
	display, err := c.Display(ctx)
	if err != nil || len(display.Steps) != 1 || display.Steps[0].Label != "Configured" {
		t.Fatalf("display: %+v %v", display, err)
	}
	authority := strings.TrimPrefix(srv.URL, "http://")
	for path, h := range seen {
		if hosts[path] != authority {
			t.Errorf("%s: Host %q, want %q", path, hosts[path], authority)
		}
		if h.Get("Origin") != "" {
			t.Errorf("%s: an Origin was sent", path)
		}
		wantAuth := "Bearer " + token
		if path == "/" {
			wantAuth = ""
		}
		if h.Get("Authorization") != wantAuth {
			t.Errorf("%s: Authorization %q", path, h.Get("Authorization"))
		}
	}
	if len(seen) != 3 {
		t.Fatalf("routes asked: %v", seen)
	}
	// WithHost and WithOrigin say what the service was told to admit.
	c2, err := tether.NewClient(srv.URL, token, tether.WithHost("tether.internal:80"), tether.WithOrigin("http://tether.internal:80"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	if hosts["/api/v1/sessions"] != "tether.internal:80" || seen["/api/v1/sessions"].Get("Origin") != "http://tether.internal:80" {
		t.Fatalf("Host %q Origin %q", hosts["/api/v1/sessions"], seen["/api/v1/sessions"].Get("Origin"))
	}
}

// GIVEN refusals WHEN the client gets them THEN each is a *ResponseError
// holding the status-error document; a body that is not one says so.
func TestEveryErrorBodyIsTheStatusErrorDocument(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/sessions":
			w.Header().Set("Retry-After", "5")
			writeError(w, 429, "too_many_streams", "close one")
		case "/api/v1/sessions/gone/diagnostics":
			writeError(w, 404, "not_found", `no session "gone" here`)
		default:
			w.WriteHeader(502)
			io.WriteString(w, "<html>bad gateway</html>")
		}
	}))
	defer srv.Close()
	c, _ := tether.NewClient(srv.URL, token)
	ctx := context.Background()
	_, err := c.Diagnostics(ctx, "gone")
	var re *tether.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 404 || re.Code() != "not_found" || !re.Decoded || re.Temporary() {
		t.Fatalf("404: %#v", err)
	}
	_, err = c.Sessions(ctx)
	if !errors.As(err, &re) || re.Code() != "too_many_streams" || re.RetryAfter != 5*time.Second || !re.Temporary() {
		t.Fatalf("429: %#v", err)
	}
	_, err = c.Session(ctx, "x")
	if !errors.As(err, &re) || re.StatusCode != 502 || re.Decoded || !strings.Contains(err.Error(), "not a status-error document") {
		t.Fatalf("502: %v", err)
	}
}

// The token never shows in what a client prints, and a client refuses to
// send it in clear to an address that is not loopback.
func TestTheTokenNeverShows(t *testing.T) {
	c, err := tether.NewClient("http://127.0.0.1:9", token)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, token) || strings.Contains(s, token[:16]) {
			t.Fatalf("the token shows: %s", s)
		}
	}
	if _, err := tether.NewClient("http://10.1.2.3:80", token); err == nil {
		t.Fatal("plain HTTP to a remote address was allowed")
	}
	if _, err := tether.NewClient("http://10.1.2.3:80", token, tether.AllowNonLoopback()); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a b", "tok\r\nX-Evil: 1"} {
		if _, err := tether.NewClient("http://127.0.0.1:9", bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
	if _, err := tether.NewClient("http://127.0.0.1:9/api", token); err == nil {
		t.Error("a base URL with a path was accepted")
	}
}

// GIVEN streams written every way the standard allows WHEN read THEN the
// events are the standard's: CRLF, CR and LF line ends, comments skipped,
// data lines joined, the id kept across events, retry read, an event
// without data not dispatched, an event cut off by the end dropped.
func TestTheEventReaderFollowsTheStandard(t *testing.T) {
	stream := ":heartbeat\n\nevent: status\nid: 7\ndata: {\"a\":\r\ndata:1}\r\n\r\n" +
		"data: second\rretry: 1500\r\r" +
		"event: lonely\nid: 9\n\n" +
		"event: status\ndata:x\n\n" +
		"id: bad\x00\ndata: y\n\n" +
		"data: cut"
	r := tether.NewEventReader(strings.NewReader(stream))
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s|%s|%q", ev.Type, ev.ID, ev.Data))
	}
	want := []string{
		`status|7|"{\"a\":\n1}"`,
		`message|7|"second"`,
		`status|9|"x"`,
		`message|9|"y"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Retry() != 1500*time.Millisecond || r.LastEventID() != "9" {
		t.Fatalf("retry %v id %q", r.Retry(), r.LastEventID())
	}
}

// GIVEN a session stream that drops after its first event WHEN it is
// followed THEN the client opens it again with Last-Event-ID, drops the
// repeated state, delivers the next, and ends on removed.
func TestFollowReconnectsWithLastEventID(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Authorization") != "Bearer "+token {
			writeError(w, 400, "invalid_request", "headers")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch n {
		case 1:
			fmt.Fprintf(w, "event: status\nid: 1\ndata: %s\n\n", status(1))
		case 2:
			w.WriteHeader(503)
		default:
			fmt.Fprintf(w, ":heartbeat\n\nevent: status\nid: 1\ndata: %s\n\n", status(1))
			fmt.Fprintf(w, "event: status\nid: 2\ndata: %s\n\n", status(2))
			io.WriteString(w, "event: removed\ndata: {\"session_id\":\"s:1\"}\n\n")
		}
	}))
	defer srv.Close()
	c, _ := tether.NewClient(srv.URL, token)
	var got []string
	var reconnects []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := c.FollowSession(ctx, "s:1", tether.FollowOptions{
		MinBackoff: 5 * time.Millisecond,
		OnReconnect: func(n int, wait time.Duration, err error) {
			reconnects = append(reconnects, fmt.Sprintf("%d:%v", n, err))
		},
	}, func(u tether.SessionUpdate) error {
		if u.Removed {
			got = append(got, "removed")
			return nil
		}
		rev, _ := u.Status.History.Revision.Get()
		got = append(got, fmt.Sprintf("%s=%d", u.ID, rev))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "1=1 2=2 removed" {
		t.Fatalf("delivered %v", got)
	}
	if strings.Join(lastIDs, ",") != ",1,1" {
		t.Fatalf("Last-Event-ID sent: %q", lastIDs)
	}
	if len(reconnects) != 2 || !strings.HasPrefix(reconnects[1], "2:") || !strings.Contains(reconnects[1], "503") {
		t.Fatalf("reconnects: %v", reconnects)
	}
}

// GIVEN a stream that goes silent (no event, no heartbeat) WHEN followed
// THEN the connection is dropped after IdleTimeout and opened again.
func TestASilentStreamIsOpenedAgain(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprintf(w, "event: status\nid: 3\ndata: %s\n\n", status(3))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		io.WriteString(w, "event: removed\ndata: {}\n\n")
	}))
	defer srv.Close()
	defer close(release)
	c, _ := tether.NewClient(srv.URL, token)
	var why error
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := 0
	err := c.FollowSession(ctx, "s:1", tether.FollowOptions{
		IdleTimeout: 200 * time.Millisecond, MinBackoff: time.Millisecond,
		OnReconnect: func(_ int, _ time.Duration, err error) { why = err },
	}, func(tether.SessionUpdate) error { events++; return nil })
	if err != nil || events != 2 {
		t.Fatalf("err %v, %d events", err, events)
	}
	if why == nil || !strings.Contains(why.Error(), "nothing arrived") {
		t.Fatalf("why: %v", why)
	}
}

// GIVEN a refusal asking again cannot change (401) WHEN a stream is
// followed THEN the follow ends at once with it; fn's own error ends it too.
func TestFollowEndsOnARefusalOrOnFnsError(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path == "/api/v1/sessions/s/events" {
			writeError(w, 401, "unauthorized", "send the token")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: status\nid: 5\ndata: %s\n\n", status(5))
	}))
	defer srv.Close()
	c, _ := tether.NewClient(srv.URL, token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := c.FollowSession(ctx, "s", tether.FollowOptions{}, func(tether.SessionUpdate) error { return nil })
	var re *tether.ResponseError
	if !errors.As(err, &re) || re.Code() != "unauthorized" || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	stop := errors.New("enough")
	err = c.FollowSession(ctx, "t", tether.FollowOptions{}, func(tether.SessionUpdate) error { return stop })
	if err != stop {
		t.Fatalf("fn's error: %v", err)
	}
}
