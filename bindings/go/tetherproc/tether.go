//go:build unix

package tetherproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"tether.dev/bindings/go/tether"
)

// StartWithin bounds the wait for a child's first line: a cold start of
// tether reading a large store stays well inside it.
const StartWithin = 60 * time.Second

// Serve is a running `tether serve`.
type Serve struct {
	*Child
	// URL is where it answers: http://127.0.0.1:PORT.
	URL   string
	token string
}

// Token is the service's bearer token (tether serve draws it from the OS
// RNG at start and prints it once, on the pipe only this host reads).
// Hand it to a client; never print it.
func (s *Serve) Token() string { return s.token }

// String never shows the token.
func (s *Serve) String() string { return fmt.Sprintf("tether serve at %s (pid %d)", s.URL, s.Pid()) }

// Client is a client of this service.
func (s *Serve) Client(opts ...tether.Option) (*tether.Client, error) {
	return tether.NewClient(s.URL, s.token, opts...)
}

// ServeOptions say how to start `tether serve`.
type ServeOptions struct {
	// DB is the store (a SQLite file or a postgres:// URL). Required: a
	// host names its store rather than inheriting TETHER_DB.
	DB string
	// Env is the child's environment (nil: this process's).
	Env []string
	// Stderr also receives the child's stderr (nil: only kept for errors).
	Stderr interface{ Write([]byte) (int, error) }
}

// StartServe starts `BIN serve --db DB --addr 127.0.0.1:0 --json` and
// reads its {url, login_url, token} line.
func StartServe(ctx context.Context, bin string, opts ServeOptions) (*Serve, error) {
	if opts.DB == "" {
		return nil, errors.New("tetherproc: ServeOptions.DB is required")
	}
	cmd := exec.Command(bin, "serve", "--db", opts.DB, "--addr", "127.0.0.1:0", "--json")
	cmd.Env = opts.Env
	if opts.Stderr != nil {
		cmd.Stderr = opts.Stderr
	}
	child, err := Start("tether serve", cmd)
	if err != nil {
		return nil, err
	}
	line, err := child.Line(ctx, StartWithin)
	if err != nil {
		_, _ = child.Stop(5 * time.Second)
		return nil, err
	}
	var first struct {
		URL      string `json:"url"`
		LoginURL string `json:"login_url"`
		Token    string `json:"token"`
	}
	if err := json.Unmarshal(line, &first); err != nil || first.URL == "" || first.Token == "" {
		_, _ = child.Stop(5 * time.Second)
		return nil, errors.New("tetherproc: tether serve's first line is not its {url, login_url, token} document")
	}
	u, err := url.Parse(first.URL)
	if err != nil || u.Hostname() != "127.0.0.1" {
		_, _ = child.Stop(5 * time.Second)
		return nil, fmt.Errorf("tetherproc: tether serve listens on %q, not 127.0.0.1", first.URL)
	}
	return &Serve{Child: child, URL: first.URL, token: first.Token}, nil
}

// Collect is a running `tether collect`.
type Collect struct {
	*Child
	// Endpoint is its OTLP/HTTP base URL (http://127.0.0.1:PORT).
	Endpoint string
	// TokenFile is where its token is kept (mode 0600).
	TokenFile string
	// Document is the collect document it printed at start.
	Document tether.CollectDocument
	token    string
}

// Token is the receiver's token, which this host drew from the OS RNG: a
// harness sends it as `Authorization: Bearer …`. Never print it.
func (c *Collect) Token() string { return c.token }

// String never shows the token.
func (c *Collect) String() string {
	return fmt.Sprintf("tether collect at %s (pid %d)", c.Endpoint, c.Pid())
}

// CollectOptions say how to start `tether collect`.
type CollectOptions struct {
	// DB is the store it writes sessions to (required).
	DB string
	// StateDir is the child's XDG_STATE_HOME: its token is kept in
	// StateDir/tether/collect-token. Required; a private directory of the
	// host's (created 0700).
	StateDir string
	// Env is the child's environment besides XDG_STATE_HOME (nil: this
	// process's).
	Env []string
	// Stderr also receives the child's stderr.
	Stderr interface{ Write([]byte) (int, error) }
}

// NewToken is 32 bytes from the OS RNG (crypto/rand) as 64 lowercase hex
// digits: the form tether keeps tokens in.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("tetherproc: the OS random source: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// StartCollect draws a token from the OS RNG, keeps it where `tether
// collect` reads its token (StateDir/tether/collect-token, 0600 in a 0700
// directory, written whole before it is put in place), then starts
// `BIN collect --db DB --addr 127.0.0.1:0 --json` and reads its collect
// document.
func StartCollect(ctx context.Context, bin string, opts CollectOptions) (*Collect, error) {
	if opts.DB == "" || opts.StateDir == "" {
		return nil, errors.New("tetherproc: CollectOptions.DB and StateDir are required")
	}
	token, err := NewToken()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(opts.StateDir, "tether")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for _, d := range []string{opts.StateDir, dir} {
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, err
		}
	}
	file := filepath.Join(dir, "collect-token")
	tmp, err := os.CreateTemp(dir, ".collect-token.*")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.WriteString(token + "\n")
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if err := werr; err != nil {
		_ = os.Remove(tmp.Name())
		return nil, err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return nil, err
	}

	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(withoutVar(env, "XDG_STATE_HOME"), "XDG_STATE_HOME="+opts.StateDir)
	cmd := exec.Command(bin, "collect", "--db", opts.DB, "--addr", "127.0.0.1:0", "--json")
	cmd.Env = env
	if opts.Stderr != nil {
		cmd.Stderr = opts.Stderr
	}
	child, err := Start("tether collect", cmd)
	if err != nil {
		return nil, err
	}
	line, err := child.Line(ctx, StartWithin)
	if err != nil {
		_, _ = child.Stop(5 * time.Second)
		return nil, err
	}
	c := &Collect{Child: child, TokenFile: file, token: token}
	if err := tether.Decode(line, &c.Document); err != nil {
		_, _ = child.Stop(5 * time.Second)
		return nil, fmt.Errorf("tetherproc: tether collect's first line is not a collect document: %w", err)
	}
	c.Endpoint = c.Document.Endpoint
	kept, _ := tether.Deref(c.Document.TokenFile)
	if filepath.Clean(kept) != file {
		_, _ = child.Stop(5 * time.Second)
		return nil, fmt.Errorf("tetherproc: tether collect keeps its token in %q, not the %q this host wrote", kept, file)
	}
	if u, err := url.Parse(c.Endpoint); err != nil || u.Hostname() != "127.0.0.1" {
		_, _ = child.Stop(5 * time.Second)
		return nil, fmt.Errorf("tetherproc: tether collect listens on %q, not 127.0.0.1", c.Endpoint)
	}
	return c, nil
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
