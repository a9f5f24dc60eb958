package tether

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// The helpers the generated codecs share.

// objectEncoder writes one JSON object, field by field.
type objectEncoder struct {
	buf bytes.Buffer
	err error
}

func (e *objectEncoder) field(key string, value interface{}) {
	if e.err != nil {
		return
	}
	v, err := json.Marshal(value)
	if err != nil {
		e.err = fmt.Errorf("%s: %w", key, err)
		return
	}
	e.raw(key, v)
}

func (e *objectEncoder) raw(key string, value []byte) {
	if e.buf.Len() == 0 {
		e.buf.WriteByte('{')
	} else {
		e.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	e.buf.Write(k)
	e.buf.WriteByte(':')
	e.buf.Write(value)
}

func (e *objectEncoder) finish(unknown map[string]json.RawMessage) ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	keys := make([]string, 0, len(unknown))
	for k := range unknown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := unknown[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("unknown field %q does not hold JSON", k)
		}
		e.raw(k, v)
	}
	if e.buf.Len() == 0 {
		return []byte("{}"), nil
	}
	e.buf.WriteByte('}')
	return e.buf.Bytes(), nil
}

// arrayOf makes a nil slice encode as [] where the schema has no null.
func arrayOf[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mapOf makes a nil map encode as {} where the schema has no null.
func mapOf[M ~map[string]V, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}

type rawField struct {
	key   string
	value json.RawMessage
}

// readObject splits a JSON object into its fields, in order; a key twice
// is an error (which of two values would be meant?).
func readObject(data []byte, typ string) ([]rawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s: want an object, got %s", typ, kindOf(tok))
	}
	var fields []rawField
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", typ, err)
		}
		key := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("%s: field %q twice", typ, key)
		}
		seen[key] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", typ, key, err)
		}
		fields = append(fields, rawField{key: key, value: value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: data after the object", typ)
	}
	return fields, nil
}

func kindOf(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return string(t)
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

var errNull = errors.New("null where the schema allows no null")

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decodeField decodes one field's value into target; null only where the
// schema allows it.
func decodeField(f rawField, target interface{}, nullable bool) error {
	if !nullable && isNull(f.value) {
		return errNull
	}
	return json.Unmarshal(f.value, target)
}

func keepUnknown(unknown map[string]json.RawMessage, f rawField) map[string]json.RawMessage {
	if unknown == nil {
		unknown = map[string]json.RawMessage{}
	}
	unknown[f.key] = append(json.RawMessage(nil), f.value...)
	return unknown
}

// FieldError is a field that did not decode: Path is where, from the
// outermost struct in (`SessionStatus.history: AttachmentHistory.revision`).
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldError(typ, key string, err error) error {
	var inner *FieldError
	if errors.As(err, &inner) {
		return &FieldError{Path: typ + "." + key + " > " + inner.Path, Err: inner.Err}
	}
	return &FieldError{Path: typ + "." + key, Err: err}
}

func requireFields(typ string, fields []rawField, required ...string) error {
	for _, r := range required {
		found := false
		for _, f := range fields {
			if f.key == r {
				found = true
				break
			}
		}
		if !found {
			return &FieldError{Path: typ + "." + r, Err: errors.New("a required field is missing")}
		}
	}
	return nil
}
