// Package gen turns Tether's JSON Schemas (what `tether schema DOC`
// prints, committed under bindings/go/schemas) into the Go types of
// package tether: one type per definition, typed enumerations that keep
// values they do not know, and per-struct JSON codecs that give back
// exactly the fields a document had (absent, null or a value).
//
// The generator knows the schema keywords Tether's schemas use and
// refuses any other: a schema construct it cannot represent stops the
// generation with its path, never a guess.
package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// SchemaSuffix ends every schema file's name: DOC.schema.json.
const SchemaSuffix = ".schema.json"

// Documents lists the documents in dir (each DOC of DOC.schema.json), sorted.
func Documents(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var docs []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), SchemaSuffix) {
			docs = append(docs, strings.TrimSuffix(e.Name(), SchemaSuffix))
		}
	}
	sort.Strings(docs)
	if len(docs) == 0 {
		return nil, fmt.Errorf("no *%s files in %s", SchemaSuffix, dir)
	}
	return docs, nil
}

// Generate reads every DOC.schema.json in dir and returns the gofmt'ed
// source of package tether's documents_gen.go.
func Generate(dir string) ([]byte, error) {
	docs, err := Documents(dir)
	if err != nil {
		return nil, err
	}
	g := &generator{names: map[defKey]string{}, variants: map[string][]*variant{}}
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(dir, doc+SchemaSuffix))
		if err != nil {
			return nil, err
		}
		root, err := parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc, err)
		}
		if err := g.add(doc, root); err != nil {
			return nil, fmt.Errorf("%s: %w", doc, err)
		}
	}
	src, err := g.emit()
	if err != nil {
		return nil, err
	}
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("the generated source does not parse: %w\n%s", err, src)
	}
	return out, nil
}

type defKey struct{ doc, def string }

// variant is one definition's content; documents that define a name alike
// share one Go type.
type variant struct {
	name      string // the schema's name for it
	canonical string
	schema    *node
	docs      []string // every document that defines it
	roots     []string // the documents it is the root of
	goName    string
}

type document struct {
	name, id, title string
	root            *node
}

type generator struct {
	documents []document
	variants  map[string][]*variant
	order     []string // definition names in first-seen order
	names     map[defKey]string
}

// rootKey is the key of a document's root among its definitions.
const rootKey = "#"

func (g *generator) add(doc string, root *node) error {
	if root.kind != 'o' {
		return fmt.Errorf("the schema is not an object")
	}
	if s := root.text("$schema"); s != "https://json-schema.org/draft/2020-12/schema" {
		return fmt.Errorf("$schema is %q, not draft 2020-12", s)
	}
	title := root.text("title")
	if title == "" {
		return fmt.Errorf("the root has no title (the document's type name)")
	}
	g.documents = append(g.documents, document{name: doc, id: root.text("$id"), title: title, root: root})
	if err := checkKeywords(root, "#"); err != nil {
		return err
	}
	g.define(doc, title, rootKey, root.without("$schema", "$id", "$defs"))
	if defs := root.get("$defs"); defs != nil {
		for _, name := range defs.keys {
			g.define(doc, name, name, defs.fields[name])
		}
	}
	return nil
}

func (g *generator) define(doc, name, key string, schema *node) {
	canonical := schema.canonical()
	for _, v := range g.variants[name] {
		if v.canonical == canonical {
			v.docs = append(v.docs, doc)
			if key == rootKey {
				v.roots = append(v.roots, doc)
			}
			g.names[defKey{doc, key}] = name // resolved to a Go name in emit
			return
		}
	}
	if _, seen := g.variants[name]; !seen {
		g.order = append(g.order, name)
	}
	v := &variant{name: name, canonical: canonical, schema: schema, docs: []string{doc}}
	if key == rootKey {
		v.roots = []string{doc}
	}
	g.variants[name] = append(g.variants[name], v)
	g.names[defKey{doc, key}] = name
}

// resolve gives every variant its Go name: the definition's own name, or,
// where documents define one name differently, the first document's name
// before it (status-sessions' SessionSummary is StatusSessionsSessionSummary).
func (g *generator) resolve() error {
	taken := map[string]string{}
	for _, name := range g.order {
		vs := g.variants[name]
		for _, v := range vs {
			v.goName = exported(name)
			if len(vs) > 1 {
				v.goName = exported(v.docs[0]) + exported(name)
			}
			if other, dup := taken[v.goName]; dup {
				return fmt.Errorf("two definitions would both be Go type %s (%s and %s)", v.goName, other, name)
			}
			if reserved[v.goName] {
				return fmt.Errorf("definition %s would be Go type %s, which package tether defines by hand", name, v.goName)
			}
			taken[v.goName] = name
		}
	}
	return nil
}

// reserved are the names package tether's hand-written files use.
var reserved = map[string]bool{
	"Optional": true, "Some": true, "Deref": true, "DocumentInfo": true, "Documents": true,
	"NewDocument": true, "Decode": true, "DecodeStrict": true, "UnknownFields": true,
	"Client": true, "ResponseError": true, "Event": true, "FieldError": true, "Timestamp": false,
}

func (g *generator) goName(doc, key string) (string, error) {
	name, ok := g.names[defKey{doc, key}]
	if !ok {
		return "", fmt.Errorf("$ref to #/$defs/%s, which %s does not define", key, doc)
	}
	for _, v := range g.variants[name] {
		for _, d := range v.docs {
			if d == doc {
				return v.goName, nil
			}
		}
	}
	return "", fmt.Errorf("no variant of %s for %s", name, doc)
}

// === keywords ===

// keywords are the schema keywords the generator represents; any other
// stops it. Values under default and examples are data, not schema.
var keywords = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "$ref": true, "title": true, "description": true,
	"type": true, "properties": true, "required": true, "items": true, "additionalProperties": true,
	"anyOf": true, "oneOf": true, "enum": true, "const": true, "format": true, "minimum": true,
	"default": true, "examples": true,
}

func checkKeywords(n *node, path string) error {
	if n.kind != 'o' {
		return nil
	}
	for _, k := range n.keys {
		v := n.fields[k]
		p := path + "/" + k
		if !keywords[k] {
			return fmt.Errorf("%s: the generator does not know the keyword %q; teach it before the schema uses it", path, k)
		}
		switch k {
		case "properties", "$defs":
			for _, name := range v.keys {
				if err := checkKeywords(v.fields[name], p+"/"+name); err != nil {
					return err
				}
			}
		case "items", "additionalProperties":
			if err := checkKeywords(v, p); err != nil {
				return err
			}
		case "anyOf", "oneOf":
			for i, item := range v.items {
				if err := checkKeywords(item, p+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// === types ===

// goType is a schema's Go type: its expression, whether null is one of its
// values, and what kind of value it is (for the codecs).
type goType struct {
	expr     string
	nullable bool
	kind     string // "slice", "map", "raw" or ""
}

func (g *generator) typeOf(doc string, n *node, path string) (goType, error) {
	if n == nil || n.kind != 'o' {
		return goType{}, fmt.Errorf("%s: not a schema object", path)
	}
	if ref := n.text("$ref"); ref != "" {
		const prefix = "#/$defs/"
		if !strings.HasPrefix(ref, prefix) {
			return goType{}, fmt.Errorf("%s: $ref %q is not a local definition", path, ref)
		}
		name, err := g.goName(doc, strings.TrimPrefix(ref, prefix))
		if err != nil {
			return goType{}, fmt.Errorf("%s: %w", path, err)
		}
		t := goType{expr: name}
		if v := g.variantNamed(name); v != nil {
			t.kind = containerKind(v.schema)
		}
		return t, nil
	}
	if any := n.get("anyOf"); any != nil {
		if len(any.items) != 2 {
			return goType{}, fmt.Errorf("%s: anyOf is only understood as [schema, {type: null}]", path)
		}
		var other *node
		nulls := 0
		for _, item := range any.items {
			if item.text("type") == "null" && len(item.keys) == 1 {
				nulls++
			} else {
				other = item
			}
		}
		if nulls != 1 || other == nil {
			return goType{}, fmt.Errorf("%s: anyOf is only understood as [schema, {type: null}]", path)
		}
		t, err := g.typeOf(doc, other, path+"/anyOf")
		if err != nil {
			return goType{}, err
		}
		if t.nullable {
			return goType{}, fmt.Errorf("%s: a nullable schema inside anyOf with null", path)
		}
		t.nullable = true
		return t, nil
	}
	if n.has("oneOf") || n.has("enum") || n.has("const") || n.has("properties") {
		return goType{}, fmt.Errorf("%s: an enumeration or object inline; the generator wants it as a $defs entry", path)
	}
	typ, nullable, err := typeWord(n, path)
	if err != nil {
		return goType{}, err
	}
	var t goType
	switch typ {
	case "":
		// No type at all: any JSON value, null included.
		return goType{expr: "json.RawMessage", nullable: true, kind: "raw"}, nil
	case "string":
		t.expr = "string"
	case "boolean":
		t.expr = "bool"
	case "number":
		t.expr = "float64"
	case "integer":
		t.expr, err = integer(n, path)
	case "array":
		items := n.get("items")
		if items == nil {
			return goType{}, fmt.Errorf("%s: an array without items", path)
		}
		it, e := g.typeOf(doc, items, path+"/items")
		if e != nil {
			return goType{}, e
		}
		if it.nullable && it.kind != "raw" {
			return goType{}, fmt.Errorf("%s: an array of nullable items", path)
		}
		t = goType{expr: "[]" + it.expr, kind: "slice"}
	case "object":
		ap := n.get("additionalProperties")
		switch {
		case ap == nil || (ap.kind == 'b' && ap.bool):
			t = goType{expr: "map[string]json.RawMessage", kind: "map"}
		case ap.kind == 'o':
			vt, e := g.typeOf(doc, ap, path+"/additionalProperties")
			if e != nil {
				return goType{}, e
			}
			if vt.nullable && vt.kind != "raw" {
				return goType{}, fmt.Errorf("%s: a map of nullable values", path)
			}
			t = goType{expr: "map[string]" + vt.expr, kind: "map"}
		default:
			return goType{}, fmt.Errorf("%s: additionalProperties false on an object without properties", path)
		}
	default:
		return goType{}, fmt.Errorf("%s: type %q", path, typ)
	}
	if err != nil {
		return goType{}, err
	}
	t.nullable = nullable
	return t, nil
}

func (g *generator) variantNamed(goName string) *variant {
	for _, vs := range g.variants {
		for _, v := range vs {
			if v.goName == goName {
				return v
			}
		}
	}
	return nil
}

// containerKind says whether a named definition is itself a map (its Go
// type is then a map type).
func containerKind(n *node) string {
	if n.text("type") == "object" && !n.has("properties") {
		return "map"
	}
	return ""
}

// typeWord reads "type": a word, or [word, "null"].
func typeWord(n *node, path string) (string, bool, error) {
	t := n.get("type")
	switch {
	case t == nil:
		return "", false, nil
	case t.kind == 's':
		if t.str == "null" {
			return "", false, fmt.Errorf("%s: type null alone", path)
		}
		return t.str, false, nil
	case t.kind == 'a' && len(t.items) == 2:
		var word string
		nulls := 0
		for _, item := range t.items {
			if item.kind == 's' && item.str == "null" {
				nulls++
			} else if item.kind == 's' {
				word = item.str
			}
		}
		if nulls == 1 && word != "" {
			return word, true, nil
		}
	}
	return "", false, fmt.Errorf("%s: type %s is not a word or [word, null]", path, t.canonical())
}

func integer(n *node, path string) (string, error) {
	switch f := n.text("format"); f {
	case "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64":
		return f, nil
	case "":
		// No format: minimum 0 says unsigned.
		if m := n.get("minimum"); m != nil && m.kind == 'n' && !strings.HasPrefix(m.num.String(), "-") {
			return "uint64", nil
		}
		return "int64", nil
	default:
		return "", fmt.Errorf("%s: integer format %q", path, f)
	}
}

// === names ===

var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "urls": "URLs", "uri": "URI", "http": "HTTP",
	"https": "HTTPS", "json": "JSON", "api": "API", "mcp": "MCP", "acp": "ACP", "sse": "SSE",
	"tls": "TLS", "ip": "IP", "otlp": "OTLP", "cpu": "CPU", "ttl": "TTL", "os": "OS", "ui": "UI",
	"sql": "SQL", "html": "HTML", "utf8": "UTF8", "na": "NA",
}

// exported is a Go identifier for a schema name: snake_case, kebab-case,
// slashes and CamelCase alike (`tool_count` ToolCount, `n/a` NA,
// `status-sessions` StatusSessions, `SessionSummary` SessionSummary).
func exported(name string) string {
	var words []string
	word := []rune{}
	flush := func() {
		if len(word) > 0 {
			words = append(words, string(word))
			word = word[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && i > 0 && unicode.IsLower(runes[i-1]) {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		lower := strings.ToLower(w)
		if up, ok := initialisms[lower]; ok {
			b.WriteString(up)
			continue
		}
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	out := b.String()
	if out == "" || unicode.IsDigit([]rune(out)[0]) {
		out = "V" + out
	}
	return out
}

// === emit ===

func (g *generator) emit() ([]byte, error) {
	if err := g.resolve(); err != nil {
		return nil, err
	}
	var all []*variant
	for _, name := range g.order {
		all = append(all, g.variants[name]...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].goName < all[j].goName })

	var b bytes.Buffer
	b.WriteString("// Code generated by tether-gen-go from bindings/go/schemas (`tether schema DOC`); DO NOT EDIT.\n\n")
	b.WriteString("package tether\n\n")
	b.WriteString("import \"encoding/json\"\n\n")
	b.WriteString("var _ json.RawMessage\n\n")

	// The registry of documents, in name order.
	b.WriteString("// Documents are the public documents, one per `tether schema` name, in name order.\n")
	b.WriteString("var Documents = []DocumentInfo{\n")
	for _, d := range g.documents {
		goName, err := g.goName(d.name, rootKey)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\t{Name: %q, SchemaID: %q, Type: %q, New: func() interface{} { return new(%s) }},\n", d.name, d.id, goName, goName)
	}
	b.WriteString("}\n\n")

	for _, v := range all {
		if err := g.emitType(&b, v); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", v.name, strings.Join(v.docs, ", "), err)
		}
	}
	return b.Bytes(), nil
}

func comment(b *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			fmt.Fprintf(b, "%s//\n", indent)
		} else {
			fmt.Fprintf(b, "%s// %s\n", indent, line)
		}
	}
}

func (g *generator) origin(v *variant) string {
	var parts []string
	for _, r := range v.roots {
		parts = append(parts, fmt.Sprintf("the %s document (`tether schema %s`)", r, r))
	}
	var defs []string
	for _, d := range v.docs {
		isRoot := false
		for _, r := range v.roots {
			isRoot = isRoot || r == d
		}
		if !isRoot {
			defs = append(defs, d)
		}
	}
	if len(defs) > 0 {
		parts = append(parts, fmt.Sprintf("`#/$defs/%s` of %s", v.name, strings.Join(defs, ", ")))
	}
	return strings.Join(parts, "; ")
}

func (g *generator) emitType(b *bytes.Buffer, v *variant) error {
	n := v.schema
	doc := v.docs[0]
	fmt.Fprintf(b, "// %s is %s.\n", v.goName, g.origin(v))
	if d := n.text("description"); d != "" {
		b.WriteString("//\n")
		comment(b, "", d)
	}
	switch {
	case n.text("type") == "object" && n.has("properties"):
		return g.emitStruct(b, v, doc)
	case n.has("oneOf"):
		var values []enumValue
		for i, item := range n.get("oneOf").items {
			if item.text("type") != "string" || item.get("const") == nil || item.get("const").kind != 's' {
				return fmt.Errorf("oneOf/%d is not a string const", i)
			}
			values = append(values, enumValue{value: item.get("const").str, doc: item.text("description")})
		}
		return emitEnum(b, v.goName, values, false)
	case n.text("type") == "string" && n.has("enum"):
		var values []enumValue
		for _, item := range n.get("enum").items {
			if item.kind != 's' {
				return fmt.Errorf("a non-string enum value")
			}
			values = append(values, enumValue{value: item.str})
		}
		return emitEnum(b, v.goName, values, false)
	case n.text("type") == "string" && n.has("examples"):
		var values []enumValue
		for _, item := range n.get("examples").items {
			if item.kind != 's' {
				return fmt.Errorf("a non-string example")
			}
			values = append(values, enumValue{value: item.str})
		}
		return emitEnum(b, v.goName, values, true)
	}
	t, err := g.typeOf(doc, n, "#/$defs/"+v.name)
	if err != nil {
		return err
	}
	if t.nullable {
		return fmt.Errorf("a nullable named type")
	}
	fmt.Fprintf(b, "type %s %s\n\n", v.goName, t.expr)
	return nil
}

type enumValue struct{ value, doc string }

func emitEnum(b *bytes.Buffer, name string, values []enumValue, open bool) error {
	if open {
		b.WriteString("//\n// The schema calls the vocabulary open and lists the values below as examples.\n")
	}
	b.WriteString("//\n// A value this binding does not know decodes as itself, the raw word kept\n")
	fmt.Fprintf(b, "// (Known reports false); it never fails a document.\n")
	fmt.Fprintf(b, "type %s string\n\n", name)
	b.WriteString("const (\n")
	seen := map[string]string{}
	for _, v := range values {
		c := name + exported(v.value)
		if other, dup := seen[c]; dup {
			return fmt.Errorf("values %q and %q are both constant %s", other, v.value, c)
		}
		seen[c] = v.value
		comment(b, "\t", v.doc)
		fmt.Fprintf(b, "\t%s %s = %q\n", c, name, v.value)
	}
	b.WriteString(")\n\n")
	fmt.Fprintf(b, "// %sValues are the values of %s this binding knows, in the schema's order.\n", name, name)
	fmt.Fprintf(b, "var %sValues = []%s{", name, name)
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name + exported(v.value))
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(b, "// Known reports whether v is one of %sValues.\n", name)
	fmt.Fprintf(b, "func (v %s) Known() bool {\n\tswitch v {\n\tcase ", name)
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name + exported(v.value))
	}
	b.WriteString(":\n\t\treturn true\n\t}\n\treturn false\n}\n\n")
	for _, v := range values {
		if v.value == "unknown" {
			// The vocabulary has its own word for "not known": a reader
			// that must show one of its words falls back to it, as
			// tether-core does.
			fmt.Fprintf(b, "// OrUnknown is v when this binding knows it, else %sUnknown: the\n", name)
			fmt.Fprintf(b, "// vocabulary's own word for a value it cannot place.\n")
			fmt.Fprintf(b, "func (v %s) OrUnknown() %s {\n\tif v.Known() {\n\t\treturn v\n\t}\n\treturn %sUnknown\n}\n\n", name, name, name)
		}
	}
	return nil
}

type field struct {
	json, goName string
	t            goType
	required     bool
}

// fieldType is a property's Go type: T (required), *T (required, may be
// null), Optional[T] (may be absent), Optional[*T] (may be absent or null).
// json.RawMessage holds null itself.
func (f field) fieldType() string {
	inner := f.t.expr
	if f.t.nullable && f.t.kind != "raw" {
		inner = "*" + inner
	}
	if f.required {
		return inner
	}
	return "Optional[" + inner + "]"
}

func (g *generator) emitStruct(b *bytes.Buffer, v *variant, doc string) error {
	n := v.schema
	if ap := n.get("additionalProperties"); ap != nil {
		return fmt.Errorf("additionalProperties beside properties")
	}
	required := map[string]bool{}
	if r := n.get("required"); r != nil {
		for _, item := range r.items {
			required[item.str] = true
		}
	}
	props := n.get("properties")
	var fields []field
	names := map[string]string{"UnknownFields": "(the unknown fields)"}
	for _, key := range props.keys {
		t, err := g.typeOf(doc, props.fields[key], "#/$defs/"+v.name+"/properties/"+key)
		if err != nil {
			return err
		}
		f := field{json: key, goName: exported(key), t: t, required: required[key]}
		if other, dup := names[f.goName]; dup {
			return fmt.Errorf("properties %q and %q are both field %s", other, key, f.goName)
		}
		names[f.goName] = key
		delete(required, key)
		fields = append(fields, f)
	}
	for missing := range required {
		return fmt.Errorf("required names %q, which is not a property", missing)
	}
	fmt.Fprintf(b, "type %s struct {\n", v.goName)
	for _, f := range fields {
		p := props.fields[f.json]
		comment(b, "\t", p.text("description"))
		switch {
		case !f.required && f.t.nullable:
			b.WriteString("\t//\n\t// May be absent or null.\n")
		case !f.required:
			b.WriteString("\t//\n\t// May be absent, never null.\n")
		case f.t.nullable:
			b.WriteString("\t//\n\t// Always present; may be null.\n")
		}
		fmt.Fprintf(b, "\t%s %s `json:%q`\n", f.goName, f.fieldType(), f.json)
	}
	b.WriteString("\t// UnknownFields are fields this binding does not know (a newer Tether's),\n")
	b.WriteString("\t// kept as they came and encoded back; DecodeStrict refuses them.\n")
	b.WriteString("\tUnknownFields map[string]json.RawMessage `json:\"-\"`\n")
	b.WriteString("}\n\n")

	// MarshalJSON
	fmt.Fprintf(b, "// MarshalJSON encodes the fields in the schema's order: an absent Optional\n// is left out, a nil pointer is null, and the unknown fields follow.\n")
	fmt.Fprintf(b, "func (x %s) MarshalJSON() ([]byte, error) {\n\tvar e objectEncoder\n", v.goName)
	for _, f := range fields {
		val := "x." + f.goName
		if !f.required {
			val += ".Value"
		}
		if !f.t.nullable {
			switch f.t.kind {
			case "slice":
				val = "arrayOf(" + val + ")"
			case "map":
				val = "mapOf(" + val + ")"
			}
		}
		if f.required {
			fmt.Fprintf(b, "\te.field(%q, %s)\n", f.json, val)
		} else {
			fmt.Fprintf(b, "\tif x.%s.Present {\n\t\te.field(%q, %s)\n\t}\n", f.goName, f.json, val)
		}
	}
	b.WriteString("\treturn e.finish(x.UnknownFields)\n}\n\n")

	// UnmarshalJSON
	fmt.Fprintf(b, "// UnmarshalJSON decodes an object: a required field missing, a field null\n// where the schema has no null, or a value of the wrong type is an error;\n// an unknown field is kept in UnknownFields.\n")
	fmt.Fprintf(b, "func (x *%s) UnmarshalJSON(data []byte) error {\n", v.goName)
	fmt.Fprintf(b, "\tfields, err := readObject(data, %q)\n\tif err != nil {\n\t\treturn err\n\t}\n", v.goName)
	fmt.Fprintf(b, "\t*x = %s{}\n", v.goName)
	var req []string
	for _, f := range fields {
		if f.required {
			req = append(req, strconv.Quote(f.json))
		}
	}
	b.WriteString("\tfor _, f := range fields {\n\t\tswitch f.key {\n")
	for _, f := range fields {
		fmt.Fprintf(b, "\t\tcase %q:\n", f.json)
		if f.required {
			fmt.Fprintf(b, "\t\t\terr = decodeField(f, &x.%s, %v)\n", f.goName, f.t.nullable)
		} else {
			fmt.Fprintf(b, "\t\t\tx.%s.Present = true\n\t\t\terr = decodeField(f, &x.%s.Value, %v)\n", f.goName, f.goName, f.t.nullable)
		}
	}
	b.WriteString("\t\tdefault:\n\t\t\tx.UnknownFields = keepUnknown(x.UnknownFields, f)\n\t\t}\n")
	fmt.Fprintf(b, "\t\tif err != nil {\n\t\t\treturn fieldError(%q, f.key, err)\n\t\t}\n\t}\n", v.goName)
	fmt.Fprintf(b, "\treturn requireFields(%q, fields", v.goName)
	for _, r := range req {
		b.WriteString(", " + r)
	}
	b.WriteString(")\n}\n\n")
	return nil
}
