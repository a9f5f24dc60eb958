package tether_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"tether.dev/bindings/go/tether"
	"tether.dev/bindings/go/tethertest"
)

// documentOf is the document a sample belongs to: DOC.json or DOC-*.json,
// the longest DOC that fits (inventory-changes.json is not an inventory).
func documentOf(file string) (tether.DocumentInfo, bool) {
	stem := strings.TrimSuffix(file, ".json")
	var best tether.DocumentInfo
	for _, d := range tether.Documents {
		if (stem == d.Name || strings.HasPrefix(stem, d.Name+"-")) && len(d.Name) > len(best.Name) {
			best = d
		}
	}
	return best, best.Name != ""
}

// GIVEN every golden sample the Rust tests wrote (target/tether-samples)
// WHEN each is decoded strictly into its document's Go type and encoded
// again THEN nothing was unknown to the binding and the encoding is the
// same JSON value as the sample: every field absent, null or present as
// it was. Every document has at least one sample.
func TestEveryGoldenSampleRoundTripsStrictly(t *testing.T) {
	dir := tethertest.Samples(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	samples := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		doc, ok := documentOf(e.Name())
		if !ok {
			continue
		}
		seen[doc.Name]++
		samples++
		t.Run(e.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			v := doc.New()
			if err := tether.DecodeStrict(data, v); err != nil {
				t.Fatalf("%s as %s: %v", e.Name(), doc.Type, err)
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("encoding %s: %v", doc.Type, err)
			}
			if diff := jsonDiff(data, again); diff != "" {
				t.Fatalf("%s does not round-trip as %s: %s", e.Name(), doc.Type, diff)
			}
		})
	}
	var missing []string
	for _, d := range tether.Documents {
		if seen[d.Name] == 0 {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("TETHER_SAMPLES") != "" || tethertest.Required() {
			t.Fatalf("FAIL: no sample in %s for %v", dir, missing)
		}
		t.Logf("SKIP: no sample in %s for %v (run the Rust tests that write them)", dir, missing)
	}
	t.Logf("%d samples of %d of the %d documents round-tripped", samples, len(seen), len(tether.Documents))
}

// jsonDiff says where two JSON texts differ as values ("" when equal).
func jsonDiff(a, b []byte) string {
	var x, y interface{}
	if err := decodeNumbers(a, &x); err != nil {
		return "the first is not JSON: " + err.Error()
	}
	if err := decodeNumbers(b, &y); err != nil {
		return "the second is not JSON: " + err.Error()
	}
	return diffValues("$", x, y)
}

func decodeNumbers(data []byte, v interface{}) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

func diffValues(path string, a, b interface{}) string {
	switch x := a.(type) {
	case map[string]interface{}:
		y, ok := b.(map[string]interface{})
		if !ok {
			return fmt.Sprintf("%s: an object became %T", path, b)
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			xv, inX := x[k]
			yv, inY := y[k]
			switch {
			case !inY:
				return fmt.Sprintf("%s.%s was present (%s) and is absent", path, k, short(xv))
			case !inX:
				return fmt.Sprintf("%s.%s was absent and is present (%s)", path, k, short(yv))
			}
			if d := diffValues(path+"."+k, xv, yv); d != "" {
				return d
			}
		}
		return ""
	case []interface{}:
		y, ok := b.([]interface{})
		if !ok {
			return fmt.Sprintf("%s: an array became %T", path, b)
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: %d items became %d", path, len(x), len(y))
		}
		for i := range x {
			if d := diffValues(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("%s: %s became %s", path, short(a), short(b))
		}
		return ""
	}
}

func short(v interface{}) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
