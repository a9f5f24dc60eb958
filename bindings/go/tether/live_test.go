//go:build unix

package tether_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tether.dev/bindings/go/tether"
	"tether.dev/bindings/go/tethertest"
)

// The recorded Claude Code session of tests/fixtures/records/claude: time
// (used), broken (failed to start) and authy (needs auth).
const (
	recorded  = "claude"
	sessionID = "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678"
	authyLog  = ".cache/claude-cli-nodejs/-tmp--tmpf23dO3/mcp-logs-authy"
)

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func rows(st *tether.SessionStatus) map[string]tether.RowView {
	out := map[string]tether.RowView{}
	for _, a := range st.Attempts {
		if a.Current {
			for _, r := range a.Rows {
				out[r.Name] = r
			}
		}
	}
	return out
}

// GIVEN a real store holding a real recorded session, served by a real
// `tether serve` WHEN the client reads the list, the session, its
// diagnostics, its requirements checked and the page's vocabulary THEN
// every answer decodes with no field unknown to this binding; the check is
// the document `tether check` prints on the same store; and every refusal
// (a wrong token, a foreign Host, a foreign Origin, an unknown session, a
// misspelt stage, an action a store cannot run) is the status-error
// document with its code.
func TestAgainstARealTetherServe(t *testing.T) {
	bin := tethertest.Binary(t)
	db, _ := tethertest.StoreWithSession(t, bin, recorded)
	serve := tethertest.Serve(t, bin, db)
	c, err := serve.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	list, err := c.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sessionID || list.Actions {
		t.Fatalf("sessions: %+v", list)
	}
	st, err := c.Session(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	r := rows(st)
	if r["time"].Status != tether.DisplayStatusActive || r["broken"].Status != tether.DisplayStatusFailed || r["authy"].Status != tether.DisplayStatusFailed {
		t.Fatalf("rows: %+v", r)
	}
	diag, err := c.Diagnostics(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := c.Check(ctx, sessionID, []string{"time:used", "broken"}, []string{"time/get_current_time:used"})
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []string
	for _, o := range checked.Sessions[0].Requirements {
		verdicts = append(verdicts, o.Requirement+"="+strconv.FormatBool(o.Met))
	}
	if checked.Met || strings.Join(verdicts, " ") != "time:used=true broken=false time/get_current_time:used=true" {
		t.Fatalf("check: %v", verdicts)
	}
	// `tether check` on the same store: the same document.
	cliDoc, _ := tethertest.Run(t, bin, tethertest.Env(t.TempDir()), time.Minute,
		"check", sessionID, "--db", db, "--format", "json", "--require", "time:used")
	var viaCLI tether.CheckDocument
	if err := tether.DecodeStrict([]byte(cliDoc), &viaCLI); err != nil {
		t.Fatal(err)
	}
	viaService, err := c.Check(ctx, sessionID, []string{"time:used"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, &viaCLI), mustJSON(t, viaService); a != b {
		t.Fatalf("tether check and the service differ:\n%s\n%s", a, b)
	}
	display, err := c.Display(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(display.Steps) != 5 || len(display.Statuses) != len(tether.DisplayStatusValues) {
		t.Fatalf("display: %+v", display)
	}
	for _, doc := range []interface{}{list, st, diag, checked, display} {
		if unknown := tether.UnknownFields(doc); len(unknown) > 0 {
			t.Errorf("%T: fields this binding does not know: %v", doc, unknown)
		}
	}

	refused := func(what string, err error, status int, code string) {
		t.Helper()
		var re *tether.ResponseError
		if !errors.As(err, &re) || re.StatusCode != status || re.Code() != code || !re.Decoded || re.Document.Message == "" {
			t.Errorf("%s: want %d %s, got %v", what, status, code, err)
		}
	}
	wrong, _ := tether.NewClient(serve.URL, "f"+serve.Token()[1:])
	if serve.Token()[0] == 'f' {
		wrong, _ = tether.NewClient(serve.URL, "0"+serve.Token()[1:])
	}
	_, err = wrong.Sessions(ctx)
	refused("a wrong token", err, 401, "unauthorized")
	foreignHost, _ := serve.Client(tether.WithHost("attacker.example:80"))
	_, err = foreignHost.Sessions(ctx)
	refused("a foreign Host", err, 421, "bad_host")
	foreignOrigin, _ := serve.Client(tether.WithOrigin("http://attacker.example"))
	_, err = foreignOrigin.Sessions(ctx)
	refused("a foreign Origin", err, 403, "bad_origin")
	ownOrigin, _ := serve.Client(tether.WithOrigin(serve.URL))
	if _, err := ownOrigin.Sessions(ctx); err != nil {
		t.Errorf("the service's own Origin: %v", err)
	}
	localhost, _ := serve.Client(tether.WithHost("localhost:" + serve.URL[len("http://127.0.0.1:"):]))
	if _, err := localhost.Sessions(ctx); err != nil {
		t.Errorf("Host localhost:PORT: %v", err)
	}
	_, err = c.Session(ctx, "claude:nope")
	refused("an unknown session", err, 404, "not_found")
	_, err = c.Check(ctx, sessionID, []string{"time:usedd"}, nil)
	refused("a misspelt stage", err, 400, "bad_requirement")
	_, err = c.EndpointTest(ctx, sessionID, "time")
	refused("an endpoint test on a store", err, 409, "unavailable")
	out, err := c.RecentOutput(ctx, sessionID)
	if err != nil || out.State != tether.RecentOutputStateUnavailable {
		t.Errorf("recent output on a store: %+v %v", out, err)
	}
}

// GIVEN a followed session WHEN the store changes under `tether serve`
// (a second import brings a server's log) THEN the follow delivers the
// new state, with a later id, carrying the new row.
func TestFollowingARealSessionSeesItChange(t *testing.T) {
	bin := tethertest.Binary(t)
	db, home := tethertest.StoreWithSession(t, bin, recorded, authyLog)
	serve := tethertest.Serve(t, bin, db)
	c, err := serve.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ids []string
	lists := make(chan int, 4)
	go func() {
		_ = c.FollowSessions(ctx, tether.FollowOptions{}, func(l *tether.SessionList) error {
			select {
			case lists <- len(l.Sessions):
			default:
			}
			return nil
		})
	}()
	err = c.FollowSession(ctx, sessionID, tether.FollowOptions{}, func(u tether.SessionUpdate) error {
		if u.Removed {
			return errors.New("removed")
		}
		ids = append(ids, u.ID)
		r := rows(u.Status)
		switch len(ids) {
		case 1:
			if _, has := r["authy"]; has || r["time"].Status != tether.DisplayStatusActive {
				t.Fatalf("before: %+v", r)
			}
			from := filepath.Join(tethertest.RepoRoot(t), "tests", "fixtures", "records", recorded, authyLog)
			if err := tethertest.CopyTree(from, filepath.Join(home, authyLog)); err != nil {
				t.Fatal(err)
			}
			tethertest.Import(t, bin, home, db)
			return nil
		default:
			if r["authy"].Status == tether.DisplayStatusFailed {
				cancel()
			}
			return nil
		}
	})
	first, _ := strconv.Atoi(ids[0])
	last, _ := strconv.Atoi(ids[len(ids)-1])
	if !errors.Is(err, context.Canceled) || len(ids) < 2 || last <= first {
		t.Fatalf("follow ended with %v after ids %v", err, ids)
	}
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case n := <-lists:
		if n != 1 {
			t.Fatalf("the list stream: %d sessions", n)
		}
	case <-wait.C:
		t.Fatal("the list stream delivered nothing in 30 s")
	}
}
