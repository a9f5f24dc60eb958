package tether_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"tether.dev/bindings/go/tether"
)

// A session summary as status-sessions lists it; current_attempt_id,
// agent_kind and started_at may each be absent or null.
const summary = `{"schema_version":1,"actions":false,"sessions":[
 {"session_id":"s1","task_id":"t","revision":3,"counts":{"active":1}},
 {"session_id":"s2","task_id":"t","revision":4,"current_attempt_id":null,"agent_kind":"k","started_at":1796158399696,"counts":{}}]}`

func roundTrip(t *testing.T, in string, v interface{}) string {
	t.Helper()
	if err := tether.DecodeStrict([]byte(in), v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff([]byte(in), out); d != "" {
		t.Fatalf("round trip: %s\nin:  %s\nout: %s", d, in, out)
	}
	return string(out)
}

// GIVEN fields absent, null and present WHEN decoded and encoded THEN each
// comes back as it was, and the Go values say which was which.
func TestAbsentNullAndPresentComeBackAsTheyWere(t *testing.T) {
	var list tether.SessionList
	roundTrip(t, summary, &list)
	first, second := list.Sessions[0], list.Sessions[1]
	if first.CurrentAttemptID.Present || first.StartedAt.Present {
		t.Fatalf("absent fields decoded as present: %+v", first)
	}
	if !second.CurrentAttemptID.Present || second.CurrentAttemptID.Value != nil {
		t.Fatalf("an explicit null is present and nil: %+v", second.CurrentAttemptID)
	}
	if kind, ok := tether.Deref(second.AgentKind); !ok || kind != "k" {
		t.Fatalf("agent_kind: %q %v", kind, ok)
	}
	at, _ := tether.Deref(second.StartedAt)
	if got := at.Time().Format("2006-01-02T15:04:05.000Z"); got != "2026-12-01T20:53:19.696Z" {
		t.Fatalf("started_at: %s", got)
	}
	// Built in Go: an Optional left zero is absent, a required map nil is {}.
	out, err := json.Marshal(tether.StatusSessionsSessionSummary{SessionID: "s", TaskID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"session_id":"s","task_id":"t","revision":0,"counts":{}}` {
		t.Fatalf("built: %s", out)
	}
}

// GIVEN a field this binding does not know, deep in a document WHEN it is
// decoded THEN Decode keeps it and encodes it back, and DecodeStrict
// refuses the document, naming where.
func TestUnknownFieldsAreKeptOrRefusedStrictly(t *testing.T) {
	in := strings.Replace(summary, `"revision":4,`, `"revision":4,"newer":{"x":[1,2]},`, 1)
	var lenient tether.SessionList
	if err := tether.Decode([]byte(in), &lenient); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(lenient)
	if d := jsonDiff([]byte(in), out); d != "" {
		t.Fatalf("the unknown field was not kept: %s", d)
	}
	if got := tether.UnknownFields(&lenient); fmt.Sprint(got) != "[$.sessions[1].newer]" {
		t.Fatalf("UnknownFields: %v", got)
	}
	var strict tether.SessionList
	err := tether.DecodeStrict([]byte(in), &strict)
	if err == nil || !strings.Contains(err.Error(), "$.sessions[1].newer") {
		t.Fatalf("DecodeStrict: %v", err)
	}
}

// GIVEN a vocabulary word this binding does not know WHEN decoded THEN the
// document decodes, the raw word is kept and encoded back, and Known says
// it is not one of the constants.
func TestAnUnknownVocabularyWordIsKept(t *testing.T) {
	in := `{"name":"x","status":"hibernating","label":"?","color":"ultraviolet","target":"stdio x","details":[],"checklist":[]}`
	var row tether.RowView
	roundTrip(t, in, &row)
	if row.Status != "hibernating" || row.Status.Known() || row.Color.Known() {
		t.Fatalf("status %q known=%v color %q", row.Status, row.Status.Known(), row.Color)
	}
	if row.Status.OrUnknown() != tether.DisplayStatusUnknown || tether.DisplayStatusFailed.OrUnknown() != tether.DisplayStatusFailed {
		t.Fatalf("OrUnknown: %q", row.Status.OrUnknown())
	}
	if !tether.DisplayStatusActive.Known() || len(tether.DisplayStatusValues) != 7 {
		t.Fatal("the known statuses")
	}
}

// GIVEN documents that break the schema WHEN decoded THEN each is refused
// with the field's path: a required field missing, null where the schema
// has no null, a wrong type, a key twice.
func TestBrokenDocumentsAreRefusedWithTheirPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"error":"unauthorized"}`, "APIError.message: a required field is missing"},
		{`{"error":null,"message":"m"}`, "APIError.error: null where the schema allows no null"},
		{`{"error":7,"message":"m"}`, "APIError.error"},
		{`{"error":"a","error":"b","message":"m"}`, `field "error" twice`},
		{`[]`, "want an object"},
	} {
		var doc tether.APIError
		err := tether.Decode([]byte(c.in), &doc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
	var list tether.SessionList
	err := tether.Decode([]byte(`{"schema_version":1,"actions":true,"sessions":[{"session_id":"s","task_id":"t","revision":-1,"counts":{}}]}`), &list)
	var fe *tether.FieldError
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, "SessionList.sessions > StatusSessionsSessionSummary.revision") {
		t.Fatalf("a negative revision: %v", err)
	}
}

// Every document the registry names decodes through NewDocument.
func TestTheRegistryNamesEveryDocument(t *testing.T) {
	schemas, _ := filepath.Glob("../schemas/*.schema.json")
	if len(tether.Documents) != len(schemas) || len(schemas) < 18 {
		t.Fatalf("%d documents, %d schemas", len(tether.Documents), len(schemas))
	}
	v, ok := tether.NewDocument("status-error")
	if _, isErr := v.(*tether.APIError); !ok || !isErr {
		t.Fatalf("status-error is %T", v)
	}
	if _, ok := tether.NewDocument("nope"); ok {
		t.Fatal("an unknown document")
	}
}
