//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tether.dev/bindings/go/tethertest"
)

// The recorded Claude Code session of tests/fixtures/records/claude.
const (
	sessionID = "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678"
	authyLog  = ".cache/claude-cli-nodejs/-tmp--tmpf23dO3/mcp-logs-authy"
)

// output collects a process's lines and lets a test wait for one.
type output struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
	done  chan struct{}
}

func newOutput() *output { return &output{more: make(chan struct{}, 1), done: make(chan struct{})} }

func (o *output) read(r *bufio.Scanner) {
	defer close(o.done)
	for r.Scan() {
		o.mu.Lock()
		o.lines = append(o.lines, r.Text())
		o.mu.Unlock()
		select {
		case o.more <- struct{}{}:
		default:
		}
	}
}

func (o *output) all() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.lines, "\n")
}

// wait returns the first line matching re: as soon as it is printed, or
// an error when the process ends or within passes first.
func (o *output) wait(re *regexp.Regexp, within time.Duration) ([]string, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		for _, l := range o.lines {
			if m := re.FindStringSubmatch(l); m != nil {
				o.mu.Unlock()
				return m, nil
			}
		}
		o.mu.Unlock()
		select {
		case <-o.more:
		case <-o.done:
			// One last look: the line may have come with the end.
			o.mu.Lock()
			for _, l := range o.lines {
				if m := re.FindStringSubmatch(l); m != nil {
					o.mu.Unlock()
					return m, nil
				}
			}
			o.mu.Unlock()
			return nil, fmt.Errorf("the host ended before printing %s", re)
		case <-deadline.C:
			return nil, fmt.Errorf("nothing matched %s within %s", re, within)
		}
	}
}

func buildHost(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "go-host")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

func row(name string) *regexp.Regexp {
	return regexp.MustCompile(`^rev (\d+)\s+` + name + `\s+status=(\S+)\s+reason=(\S+)\s+stopped_at=(.+?)  \((.*)\)$`)
}

// GIVEN a real store holding a real recorded session (imported by `tether
// sessions import`, one server's log held back) WHEN the example host
// runs on it THEN it starts tether collect and tether serve on loopback,
// follows the newest session and prints each server's status, reason and
// the step where it stopped; when a second import brings the held-back
// log it prints the new server as it appears; on SIGTERM it stops both
// children (reaped, gone) and exits 0; and it prints no token.
func TestTheHostFollowsARealSessionAndStopsItsChildren(t *testing.T) {
	bin := tethertest.Binary(t)
	host := buildHost(t)
	db, home := tethertest.StoreWithSession(t, bin, "claude", authyLog)

	state := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command(host, "-db", db, "-tether", bin, "-state", state)
	// A private, empty home: tether collect reads today's configuration
	// from it, and must not read the user's.
	cmd.Env = tethertest.Env(t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	var stderrMu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		stderrMu.Lock()
		defer stderrMu.Unlock()
		return stderr.Write(p)
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := newOutput()
	go out.read(bufio.NewScanner(stdout))
	exited := make(chan error, 1)
	go func() {
		<-out.done
		exited <- cmd.Wait()
	}()
	stopped := false
	defer func() {
		if !stopped {
			// The host's own group and whatever it left.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			stderrMu.Lock()
			t.Logf("host stdout:\n%s\nhost stderr:\n%s", out.all(), stderr.String())
			stderrMu.Unlock()
		}
	}()
	const within = 60 * time.Second
	must := func(re *regexp.Regexp) []string {
		t.Helper()
		m, err := out.wait(re, within)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	collect := must(regexp.MustCompile(`^collect: receiving OTLP/HTTP on http://127\.0\.0\.1:\d+ \(pid (\d+); its token, from crypto/rand, is kept in (\S+)\)$`))
	serve := must(regexp.MustCompile(`^serve: http://127\.0\.0\.1:\d+ \(pid (\d+)\)$`))
	must(regexp.MustCompile(`^following ` + regexp.QuoteMeta(sessionID) + `$`))
	must(regexp.MustCompile(`^attempt records \(claude\)$`))

	tokenFile := collect[2]
	info, err := os.Stat(tokenFile)
	if err != nil || info.Mode().Perm() != 0o600 || !strings.HasPrefix(tokenFile, state) {
		t.Fatalf("the collect token file %s: %v %v", tokenFile, info, err)
	}
	tokenBytes, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	collectToken := strings.TrimSpace(string(tokenBytes))
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(collectToken) {
		t.Fatalf("the collect token is not 64 hex digits")
	}

	first := map[string][]string{}
	for _, name := range []string{"time", "broken"} {
		first[name] = must(row(name))
	}
	want := map[string][3]string{
		"time":   {"active", "-", "-"},
		"broken": {"failed", "command_not_found", "Delivered"},
	}
	for name, w := range want {
		m := first[name]
		if m[2] != w[0] || m[3] != w[1] || m[4] != w[2] {
			t.Errorf("%s: status=%s reason=%s stopped_at=%s, want %v", name, m[2], m[3], m[4], w)
		}
	}
	if strings.Contains(out.all(), "authy") {
		t.Fatalf("authy was printed before its log was imported:\n%s", out.all())
	}

	// The store changes under the running host: authy's log arrives.
	from := filepath.Join(tethertest.RepoRoot(t), "tests", "fixtures", "records", "claude", authyLog)
	if err := tethertest.CopyTree(from, filepath.Join(home, authyLog)); err != nil {
		t.Fatal(err)
	}
	tethertest.Import(t, bin, home, db)
	// Claude Code's MCP log says "Authentication required": a login wanted.
	authy := must(row("authy"))
	if authy[2] != "failed" || authy[3] != "oauth_required" || authy[4] != "Delivered" {
		t.Errorf("authy: %v", authy[1:])
	}
	before, _ := strconv.Atoi(first["time"][1])
	after, _ := strconv.Atoi(authy[1])
	if after <= before {
		t.Errorf("authy's revision %d is not after %d", after, before)
	}
	// Only what changed is printed again: time and broken did not.
	if n := strings.Count(out.all(), " time "); n != 1 {
		t.Errorf("time printed %d times:\n%s", n, out.all())
	}

	// SIGTERM, as a service manager stops a host.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Serve started last, so it is stopped first; each on SIGINT, tether's clean stop.
	stopServe := must(regexp.MustCompile(`^stopped tether serve \(pid ` + serve[1] + `\): exited 0 on SIGINT$`))
	stopCollect := must(regexp.MustCompile(`^stopped tether collect \(pid ` + collect[1] + `\): exited 0 on SIGINT$`))
	if strings.Index(out.all(), stopServe[0]) > strings.Index(out.all(), stopCollect[0]) {
		t.Error("collect was stopped before serve")
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("the host exited with %v", err)
		}
	case <-timer.C:
		t.Fatal("the host did not exit within a minute of SIGTERM")
	}
	for _, child := range [][]string{serve, collect} {
		pid, _ := strconv.Atoi(child[1])
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d is still there after the host exited (%v)", pid, err)
		}
	}

	stderrMu.Lock()
	printed := out.all() + "\n" + stderr.String()
	stderrMu.Unlock()
	if strings.Contains(printed, collectToken) {
		t.Fatal("the collect token was printed")
	}
	if m := regexp.MustCompile(`[0-9a-f]{64}`).FindString(printed); m != "" {
		t.Fatalf("something of a token's form was printed: %s…", m[:8])
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
