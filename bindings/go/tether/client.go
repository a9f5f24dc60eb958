package tether

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks to `tether serve`'s API (or a host's StatusService).
//
// The service answers only its own Host (the DNS-rebinding defence) and
// refuses any Origin but its own and those listed with --cors-origin;
// every /api/ route but login needs `Authorization: Bearer TOKEN`. The
// client sends the exact Host of its base URL (or WithHost's), no Origin
// unless WithOrigin says one, and the token on API routes only. It never
// follows a redirect and never goes through a proxy, so the token reaches
// the service and nothing else. Its String never shows the token.
type Client struct {
	base    *url.URL
	host    string
	origin  string
	token   string
	http    *http.Client
	timeout time.Duration
	remote  bool
}

// Option configures a Client.
type Option func(*Client) error

// WithHost sends this Host instead of the base URL's authority: a name the
// service was told to answer with `tether serve --allow-host`.
func WithHost(host string) Option {
	return func(c *Client) error {
		if host == "" || strings.ContainsAny(host, " \t\r\n/") {
			return fmt.Errorf("tether: host %q is not an authority", host)
		}
		c.host = strings.ToLower(host)
		return nil
	}
}

// WithOrigin sends this Origin: the service's own origin, or one listed
// with `tether serve --cors-origin`. A program that is not a browser needs
// none.
func WithOrigin(origin string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(origin, "\r\n") {
			return fmt.Errorf("tether: origin %q", origin)
		}
		c.origin = origin
		return nil
	}
}

// WithHTTPClient uses this http.Client (its transport, its limits). Keep
// its Timeout zero: event streams are long-lived; WithTimeout bounds
// document requests.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error {
		c.http = h
		return nil
	}
}

// WithTimeout bounds each document request (not the event streams) when
// its context has no deadline of its own; 30 s unless said.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		c.timeout = d
		return nil
	}
}

// AllowNonLoopback lets the client send the token over plain HTTP to an
// address that is not loopback. Without it, NewClient refuses: the token
// would cross a network in clear.
func AllowNonLoopback() Option {
	return func(c *Client) error {
		c.remote = true
		return nil
	}
}

// NewClient is a client of the service at baseURL (`http://127.0.0.1:PORT`,
// as `tether serve --json` prints it) with its bearer token.
func NewClient(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("tether: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("tether: the base URL must be http(s)://HOST:PORT with nothing after it")
	}
	u.Path = ""
	if token == "" || strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return nil, errors.New("tether: the token is empty or holds spaces or control characters")
	}
	c := &Client{base: u, host: strings.ToLower(u.Host), token: token, timeout: 30 * time.Second}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	if u.Scheme == "http" && !c.remote && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("tether: %s is not loopback; the token would cross the network in clear (AllowNonLoopback, or https)", u.Host)
	}
	if c.http == nil {
		c.http = &http.Client{
			Transport: &http.Transport{
				Proxy:                 nil,
				DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
				MaxIdleConns:          8,
				IdleConnTimeout:       90 * time.Second,
				ResponseHeaderTimeout: 30 * time.Second,
			},
		}
	}
	h := *c.http
	h.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &h
	return c, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String says where the client speaks to, never its token.
func (c *Client) String() string { return "tether.Client(" + c.base.String() + ", token redacted)" }

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// BaseURL is the service's address.
func (c *Client) BaseURL() string { return c.base.String() }

// ResponseError is a refusal or failure the service answered: the HTTP
// status and its body, the status-error document.
type ResponseError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Document is the body as the status-error document (Error is its
	// stable code: unauthorized, bad_host, bad_origin, not_found, …).
	Document APIError
	// Decoded says whether the body was a status-error document at all.
	Decoded bool
	// RetryAfter is the Retry-After the service asked for (429), or zero.
	RetryAfter time.Duration
}

func (e *ResponseError) Error() string {
	if !e.Decoded {
		return fmt.Sprintf("tether serve answered %d %s with a body that is not a status-error document",
			e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("tether serve answered %d %s: %s", e.StatusCode, e.Document.Error, e.Document.Message)
}

// Code is the status-error document's stable code ("" when the body was
// not one).
func (e *ResponseError) Code() string { return e.Document.Error }

// Temporary says whether asking again later may succeed: 429 and 5xx.
func (e *ResponseError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// maxDocument caps a document's body; the largest real ones are far below.
const maxDocument = 64 << 20

func (c *Client) request(ctx context.Context, method, path string, body []byte, api bool) (*http.Request, error) {
	// path is escaped (a session id is one segment) and may carry a query.
	u := *c.base
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, u.RawQuery = path[:i], path[i+1:]
	}
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return nil, err
	}
	u.Path, u.RawPath = unescaped, path
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), reader)
	if err != nil {
		return nil, err
	}
	req.Host = c.host
	if api {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// sessionPath is /api/v1/sessions/ID[/rest], the id escaped as one segment.
func sessionPath(id, rest string) string {
	return "/api/v1/sessions/" + url.PathEscape(id) + rest
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, api bool) ([]byte, http.Header, error) {
	if _, has := ctx.Deadline(); !has && c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := c.request(ctx, method, path, body, api)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxDocument {
		return nil, nil, fmt.Errorf("tether: %s %s: the answer is over %d bytes", method, path, maxDocument)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, responseError(resp, data)
	}
	return data, resp.Header, nil
}

func responseError(resp *http.Response, body []byte) *ResponseError {
	e := &ResponseError{StatusCode: resp.StatusCode}
	if err := Decode(body, &e.Document); err == nil {
		e.Decoded = true
	} else {
		e.Document = APIError{}
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	return e
}

func (c *Client) getDocument(ctx context.Context, path string, v interface{}) error {
	data, header, err := c.do(ctx, http.MethodGet, path, nil, true)
	if err != nil {
		return err
	}
	return decodeJSONAnswer(path, header, data, v)
}

func decodeJSONAnswer(path string, header http.Header, data []byte, v interface{}) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("tether: %s answered %q, not JSON", path, ct)
	}
	if err := Decode(data, v); err != nil {
		return fmt.Errorf("tether: %s: %w", path, err)
	}
	return nil
}

// Sessions is `GET /api/v1/sessions`: every session the token may see.
func (c *Client) Sessions(ctx context.Context) (*SessionList, error) {
	var doc SessionList
	return &doc, c.getDocument(ctx, "/api/v1/sessions", &doc)
}

// Session is `GET /api/v1/sessions/{id}`: one session's history and its
// rows projected for display.
func (c *Client) Session(ctx context.Context, id string) (*SessionStatus, error) {
	var doc SessionStatus
	return &doc, c.getDocument(ctx, sessionPath(id, ""), &doc)
}

// Diagnostics is `GET /api/v1/sessions/{id}/diagnostics`: the copy-safe
// text of the session's history.
func (c *Client) Diagnostics(ctx context.Context, id string) (*CopyDiagnostics, error) {
	var doc CopyDiagnostics
	return &doc, c.getDocument(ctx, sessionPath(id, "/diagnostics"), &doc)
}

// Check is `GET /api/v1/sessions/{id}/check`: the session's requirements
// evaluated as `tether check` evaluates them (the same library, so the
// same evidence gives the same verdict). require holds SERVER[:STAGE],
// requireTool SERVER/TOOL[:STAGE]; with neither, every server the session
// names is required at `reached`. A requirement that does not read (a
// misspelt stage) is a ResponseError, 400 bad_requirement.
func (c *Client) Check(ctx context.Context, id string, require, requireTool []string) (*CheckDocument, error) {
	var doc CheckDocument
	q := url.Values{}
	for _, r := range require {
		q.Add("require", r)
	}
	for _, r := range requireTool {
		q.Add("require_tool", r)
	}
	return &doc, c.getDocument(ctx, withQuery(sessionPath(id, "/check"), q), &doc)
}

// FleetSessions is `GET /api/v1/fleet/sessions` with the page's filters
// (status, harness, server, q, since, until, offset, limit).
func (c *Client) FleetSessions(ctx context.Context, filters url.Values) (*FleetSessions, error) {
	var doc FleetSessions
	path := "/api/v1/fleet/sessions"
	return &doc, c.getDocument(ctx, withQuery(path, filters), &doc)
}

// FleetServers is `GET /api/v1/fleet/servers` with the same filters.
func (c *Client) FleetServers(ctx context.Context, filters url.Values) (*FleetServers, error) {
	var doc FleetServers
	return &doc, c.getDocument(ctx, withQuery("/api/v1/fleet/servers", filters), &doc)
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func (c *Client) post(ctx context.Context, path string, request, v interface{}) error {
	body, err := json.Marshal(request)
	if err != nil {
		return err
	}
	data, header, err := c.do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return err
	}
	return decodeJSONAnswer(path, header, data, v)
}

// EndpointTest is `POST /api/v1/endpoint-test`: a bounded handshake and
// tools/list against one server of a session, run by the host that runs
// the session (a store-only `tether serve` answers 409 unavailable).
func (c *Client) EndpointTest(ctx context.Context, sessionID, serverName string) (*EndpointTestReport, error) {
	var doc EndpointTestReport
	req := struct {
		SessionID  string `json:"session_id"`
		ServerName string `json:"server_name"`
	}{sessionID, serverName}
	return &doc, c.post(ctx, "/api/v1/endpoint-test", req, &doc)
}

// RecentOutput is `POST /api/v1/recent-output`: the live execution's
// scrubbed tail, never stored.
func (c *Client) RecentOutput(ctx context.Context, sessionID string) (*RecentOutputDocument, error) {
	var doc RecentOutputDocument
	req := struct {
		SessionID string `json:"session_id"`
	}{sessionID}
	return &doc, c.post(ctx, "/api/v1/recent-output", req, &doc)
}

// Display is the display vocabulary (the status-display document) the
// service's page carries: each status's color and sentence, each stage
// state's mark, the five steps a person reads. The page needs no token,
// and none is sent for it.
func (c *Client) Display(ctx context.Context) (*DisplayVocabulary, error) {
	data, _, err := c.do(ctx, http.MethodGet, "/", nil, false)
	if err != nil {
		return nil, err
	}
	const open = `<script type="application/json" id="display">`
	i := bytes.Index(data, []byte(open))
	if i < 0 {
		return nil, errors.New("tether: the page carries no display vocabulary")
	}
	rest := data[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		return nil, errors.New("tether: the page's display vocabulary is not closed")
	}
	var doc DisplayVocabulary
	if err := Decode(rest[:j], &doc); err != nil {
		return nil, fmt.Errorf("tether: the page's display vocabulary: %w", err)
	}
	return &doc, nil
}
