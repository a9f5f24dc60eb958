//go:build unix

// Command go-host is what a Go host (Kandev, say) does with Tether: it
// starts `tether collect` (the OTLP receiver its harnesses send their own
// telemetry to, with a token this host draws from the OS RNG) and
// `tether serve` (the live status API) on loopback over one store,
// follows one session's event stream, prints each server's status, reason
// and the step where it stopped whenever one of them changes, and stops
// both children cleanly on SIGINT or SIGTERM.
//
//	go-host -db STORE [-session ID] [-tether BIN] [-state DIR] [-no-collect]
//
// Without -session it follows the newest session the store holds (waiting
// for one). It prints no token: serve's stays on the pipe it was read
// from, collect's in its 0600 file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"tether.dev/bindings/go/tether"
	"tether.dev/bindings/go/tetherproc"
)

// grace bounds each step of stopping a child (SIGINT, SIGTERM, SIGKILL);
// each wait ends the moment the child exits.
const grace = 5 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("go-host", flag.ContinueOnError)
	flags.SetOutput(stderr)
	db := flags.String("db", "", "the store tether collect writes and tether serve reads (a SQLite file or postgres:// URL)")
	session := flags.String("session", "", "the session to follow (KIND:ID); the newest one when empty")
	bin := flags.String("tether", "", "the tether binary (else $TETHER_BIN, else tether on PATH)")
	state := flags.String("state", "", "tether collect's state directory, where its token is kept (else a private temporary one)")
	noCollect := flags.Bool("no-collect", false, "do not start tether collect")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *db == "" {
		fmt.Fprintln(stderr, "go-host: -db is required")
		return 2
	}
	binary, err := findTether(*bin)
	if err != nil {
		fmt.Fprintln(stderr, "go-host:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := &host{out: stdout, errs: stderr}
	code := h.run(ctx, binary, *db, *session, *state, !*noCollect)
	if !h.stopChildren() && code == 0 {
		code = 1
	}
	return code
}

func findTether(flagged string) (string, error) {
	for _, candidate := range []string{flagged, os.Getenv("TETHER_BIN")} {
		if candidate != "" {
			return candidate, nil
		}
	}
	path, err := exec.LookPath("tether")
	if err != nil {
		return "", errors.New("no tether binary: pass -tether, set TETHER_BIN, or put tether on PATH")
	}
	return path, nil
}

type host struct {
	out, errs io.Writer
	children  []*tetherproc.Child // in start order; stopped in reverse
	cleanup   []func()
}

func (h *host) printf(format string, args ...interface{}) {
	fmt.Fprintf(h.out, format+"\n", args...)
}

// stopChildren stops every child, the last started first, and says how
// each ended; false when one would not stop.
func (h *host) stopChildren() bool {
	ok := true
	for i := len(h.children) - 1; i >= 0; i-- {
		c := h.children[i]
		how, err := c.Stop(grace)
		if err != nil {
			fmt.Fprintln(h.errs, "go-host:", err)
			ok = false
			continue
		}
		h.printf("stopped %s (pid %d): %s", c.Name(), c.Pid(), how)
	}
	h.children = nil
	for _, f := range h.cleanup {
		f()
	}
	return ok
}

func (h *host) run(ctx context.Context, bin, db, session, state string, collect bool) int {
	if collect {
		if state == "" {
			dir, err := os.MkdirTemp("", "go-host-state-")
			if err != nil {
				fmt.Fprintln(h.errs, "go-host:", err)
				return 1
			}
			h.cleanup = append(h.cleanup, func() { _ = os.RemoveAll(dir) })
			state = dir
		}
		c, err := tetherproc.StartCollect(ctx, bin, tetherproc.CollectOptions{DB: db, StateDir: state, Stderr: h.errs})
		if err != nil {
			fmt.Fprintln(h.errs, "go-host: tether collect:", err)
			return 1
		}
		h.children = append(h.children, c.Child)
		h.printf("collect: receiving OTLP/HTTP on %s (pid %d; its token, from crypto/rand, is kept in %s)", c.Endpoint, c.Pid(), c.TokenFile)
	}
	serve, err := tetherproc.StartServe(ctx, bin, tetherproc.ServeOptions{DB: db, Stderr: h.errs})
	if err != nil {
		fmt.Fprintln(h.errs, "go-host: tether serve:", err)
		return 1
	}
	h.children = append(h.children, serve.Child)
	h.printf("serve: %s (pid %d)", serve.URL, serve.Pid())

	// A child that dies ends the host: there is nothing left to follow.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	died := make(chan string, len(h.children))
	for _, c := range h.children {
		c := c
		go func() {
			select {
			case <-c.Done():
				died <- fmt.Sprintf("%s (pid %d) exited: %v: %s", c.Name(), c.Pid(), c.Err(), c.Stderr())
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	client, err := serve.Client()
	if err != nil {
		fmt.Fprintln(h.errs, "go-host:", err)
		return 1
	}
	err = h.follow(ctx, client, session)
	select {
	case why := <-died:
		fmt.Fprintln(h.errs, "go-host:", why)
		return 1
	default:
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(h.errs, "go-host:", err)
		return 1
	}
	return 0
}

// newest is the session that started last (the list's own order breaks ties).
func newest(list *tether.SessionList) string {
	best, bestAt := "", tether.Timestamp(0)
	for _, s := range list.Sessions {
		at, _ := tether.Deref(s.StartedAt)
		if best == "" || at > bestAt {
			best, bestAt = s.SessionID, at
		}
	}
	return best
}

var errChosen = errors.New("chosen")

func (h *host) follow(ctx context.Context, client *tether.Client, session string) error {
	display, err := client.Display(ctx)
	if err != nil {
		return err
	}
	if session == "" {
		h.printf("waiting for a session in the store…")
		err := client.FollowSessions(ctx, tether.FollowOptions{}, func(l *tether.SessionList) error {
			if session = newest(l); session != "" {
				return errChosen
			}
			return nil
		})
		if !errors.Is(err, errChosen) {
			return err
		}
	}
	h.printf("following %s", session)
	v := newView(display)
	return client.FollowSession(ctx, session, tether.FollowOptions{
		OnReconnect: func(n int, wait time.Duration, err error) {
			fmt.Fprintf(h.errs, "go-host: the event stream ended (%v); reconnecting in %s (%d)\n", err, wait.Round(time.Millisecond), n)
		},
	}, func(u tether.SessionUpdate) error {
		if u.Removed {
			h.printf("session %s was removed", session)
			return nil
		}
		for _, line := range v.update(u) {
			h.printf("%s", line)
		}
		return nil
	})
}

// serverLine is what the host shows of one server.
type serverLine struct {
	status, reason, stoppedAt, label string
}

// view remembers what was printed, to print only what changed.
type view struct {
	steps   []tether.StepWords
	attempt string
	shown   map[string]serverLine
}

func newView(display *tether.DisplayVocabulary) *view {
	return &view{steps: display.Steps, shown: map[string]serverLine{}}
}

func (v *view) update(u tether.SessionUpdate) []string {
	st := u.Status
	var out []string
	current, _ := tether.Deref(st.History.CurrentAttemptID)
	if current != v.attempt {
		kind := "?"
		for _, a := range st.History.Attempts {
			if a.AttemptID == current {
				kind = a.AgentKind
			}
		}
		out = append(out, fmt.Sprintf("attempt %s (%s)", current, kind))
		v.attempt = current
		v.shown = map[string]serverLine{}
	}
	// The rows of the current attempt, as the service projected them, and
	// the history's row of each, for its reason and its last tool call.
	var rows []tether.RowView
	for _, a := range st.Attempts {
		if a.Current {
			rows = a.Rows
		}
	}
	history := map[string]tether.ServerAttachment{}
	for _, a := range st.History.Attempts {
		if a.AttemptID == current {
			for _, s := range a.Servers.Value {
				history[s.Name] = s
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Name] = true
		line := serverLine{status: string(r.Status), reason: "-", stoppedAt: v.stoppedAt(r, history[r.Name]), label: r.Label}
		if code, ok := tether.Deref(history[r.Name].ReasonCode); ok {
			line.reason = string(code)
		}
		if old, had := v.shown[r.Name]; had && old == line {
			continue
		}
		v.shown[r.Name] = line
		out = append(out, fmt.Sprintf("rev %-4s %-16s status=%-11s reason=%-24s stopped_at=%s  (%s)",
			u.ID, r.Name, line.status, line.reason, line.stoppedAt, line.label))
	}
	var gone []string
	for name := range v.shown {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		delete(v.shown, name)
		out = append(out, fmt.Sprintf("rev %-4s %-16s gone from the current attempt", u.ID, name))
	}
	return out
}

// stoppedAt is the first of the five steps a person reads (from the
// service's display vocabulary: configured, delivered, connected, tools
// listed, used) that the row did not reach, or "-" when it reached all.
// A step's state comes from the row's checklist; "used" from its last
// tool call.
func (v *view) stoppedAt(r tether.RowView, h tether.ServerAttachment) string {
	for _, step := range v.steps {
		state := tether.StageStateUnknown
		if step.Key == "used" {
			if call, ok := tether.Deref(h.LastToolCall); ok && call.Tool != "" {
				state = tether.StageStateYes
			}
		} else {
			for _, item := range r.Checklist {
				if item.Stage == step.Key {
					state = item.State
				}
			}
		}
		if state != tether.StageStateYes {
			return step.Label
		}
	}
	return "-"
}
