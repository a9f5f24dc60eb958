package gen

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tether.dev/bindings/go/tethertest"
)

const (
	schemas   = "../../schemas"
	generated = "../../tether/documents_gen.go"
)

// GIVEN the committed schemas WHEN the generator runs THEN it makes the
// committed documents_gen.go byte for byte: the types cannot drift from
// the schemas (run `go generate ./...` in bindings/go after a change).
func TestTheCommittedTypesAreWhatTheSchemasGenerate(t *testing.T) {
	want, err := Generate(schemas)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, have) {
		t.Fatalf("tether/documents_gen.go is not what the schemas generate; run `go generate ./...` in bindings/go and commit it")
	}
}

// GIVEN the repository WHEN bindings/go/schemas is compared with
// tests/schema/golden (which `tether schema DOC` must equal byte for
// byte, tests/tests/schema_golden.rs) THEN they hold the same documents,
// byte for byte (`go run ./cmd/tether-gen-go -sync ../../tests/schema/golden`
// copies them).
func TestTheSchemasAreTheGoldenOnes(t *testing.T) {
	golden := filepath.Join(tethertest.RepoRoot(t), "tests", "schema", "golden")
	want, err := Documents(golden)
	if err != nil {
		t.Fatal(err)
	}
	have, err := Documents(schemas)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(want, " ") != strings.Join(have, " ") {
		t.Fatalf("bindings/go/schemas holds %v; tests/schema/golden holds %v", have, want)
	}
	for _, doc := range want {
		a, _ := os.ReadFile(filepath.Join(golden, doc+SchemaSuffix))
		b, _ := os.ReadFile(filepath.Join(schemas, doc+SchemaSuffix))
		if !bytes.Equal(a, b) {
			t.Errorf("schemas/%s%s differs from tests/schema/golden's", doc, SchemaSuffix)
		}
	}
}

// GIVEN the tether binary WHEN it prints every document's schema THEN each
// is the committed copy, byte for byte.
func TestTheSchemasAreWhatTetherPrints(t *testing.T) {
	bin := tethertest.Binary(t)
	docs, err := Documents(schemas)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, bin, "schema", doc).Output()
		cancel()
		if err != nil {
			t.Fatalf("tether schema %s: %v", doc, err)
		}
		want, _ := os.ReadFile(filepath.Join(schemas, doc+SchemaSuffix))
		if !bytes.Equal(out, want) {
			golden, _ := os.ReadFile(filepath.Join(tethertest.RepoRoot(t), "tests", "schema", "golden", doc+SchemaSuffix))
			hint := "copy it with `go run ./cmd/tether-gen-go -sync ../../tests/schema/golden -schemas schemas -out tether/documents_gen.go`"
			if !bytes.Equal(out, golden) {
				hint = "tests/schema/golden is behind too: the schema changed without its golden file (tests/tests/schema_golden.rs fails as well), or " + bin + " is stale"
			}
			t.Errorf("tether schema %s differs from bindings/go/schemas/%s%s; %s", doc, doc, SchemaSuffix, hint)
		}
	}
}

func generateOne(t *testing.T, schema string) error {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "doc"+SchemaSuffix), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Generate(dir)
	return err
}

// GIVEN a schema using what the generator cannot represent WHEN it runs
// THEN it stops and says where, instead of guessing a type.
func TestWhatTheGeneratorCannotRepresentStopsIt(t *testing.T) {
	head := `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Doc","type":"object",`
	for _, c := range []struct{ schema, want string }{
		{head + `"properties":{"a":{"type":"string","pattern":"x"}}}`, `keyword "pattern"`},
		{head + `"properties":{"a":{"type":"string","enum":["x"]}}}`, "inline"},
		{head + `"properties":{"a":{"$ref":"#/$defs/Nope"}}}`, "does not define"},
		{head + `"properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, "anyOf"},
		{head + `"properties":{"a":{"type":"integer","format":"uint128"}}}`, `format "uint128"`},
		{head + `"properties":{"a-b":{"type":"string"},"a_b":{"type":"string"}}}`, "both field AB"},
		{head + `"properties":{"a":{"type":"string"}},"required":["b"]}`, `required names "b"`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","title":"Doc","type":"object","properties":{}}`, "not draft 2020-12"},
	} {
		err := generateOne(t, c.schema)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  got %v, want %q", c.schema, err, c.want)
		}
	}
	if err := generateOne(t, head+`"properties":{"a":{"type":"string"}},"required":["a"]}`); err != nil {
		t.Fatalf("a plain schema: %v", err)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"tool_count": "ToolCount", "session_id": "SessionID", "n/a": "NA", "status-sessions": "StatusSessions",
		"SessionSummary": "SessionSummary", "mcp_tool": "MCPTool", "http": "HTTP", "404": "V404",
	} {
		if got := exported(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
