package tether

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// DocumentInfo names one public document.
type DocumentInfo struct {
	// Name is the document's `tether schema` name (status-session).
	Name string
	// SchemaID is its schema's $id.
	SchemaID string
	// Type is its Go type's name (SessionStatus).
	Type string
	// New returns a pointer to a new, empty document of that type.
	New func() interface{}
}

// NewDocument returns a pointer to a new document of the named type
// (`tether schema` name), or false for a name this binding does not know.
func NewDocument(name string) (interface{}, bool) {
	for _, d := range Documents {
		if d.Name == name {
			return d.New(), true
		}
	}
	return nil, false
}

// Decode decodes one JSON document into v (a pointer to a document type,
// or to any value built of them). Unknown fields are kept, unknown
// vocabulary words too.
func Decode(data []byte, v interface{}) error {
	return json.Unmarshal(data, v)
}

// DecodeStrict decodes like Decode, then refuses the document if any
// struct in it, at any depth, holds a field this binding does not know:
// what json.Decoder.DisallowUnknownFields would say, which cannot reach
// into types that decode themselves. Unknown vocabulary words are still
// accepted: the vocabularies are open.
func DecodeStrict(data []byte, v interface{}) error {
	if err := Decode(data, v); err != nil {
		return err
	}
	if unknown := UnknownFields(v); len(unknown) > 0 {
		return fmt.Errorf("fields this binding does not know: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// UnknownFields lists, as JSON paths ($.history.attempts[0].servers[2].x),
// every field a decoded value holds that this binding does not know.
func UnknownFields(v interface{}) []string {
	var out []string
	walkUnknown(reflect.ValueOf(v), "$", &out)
	sort.Strings(out)
	return out
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

func walkUnknown(v reflect.Value, path string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkUnknown(v.Elem(), path, out)
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == rawMessageType {
			return
		}
		for i := 0; i < v.Len(); i++ {
			walkUnknown(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		if v.Type().Elem() == rawMessageType {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			walkUnknown(iter.Value(), fmt.Sprintf("%s[%q]", path, fmt.Sprint(iter.Key().Interface())), out)
		}
	case reflect.Struct:
		t := v.Type()
		if strings.HasPrefix(t.Name(), "Optional[") {
			if v.FieldByName("Present").Bool() {
				walkUnknown(v.FieldByName("Value"), path, out)
			}
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Name == "UnknownFields" {
				for _, k := range v.Field(i).MapKeys() {
					*out = append(*out, path+"."+k.String())
				}
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "" || name == "-" {
				name = f.Name
			}
			walkUnknown(v.Field(i), path+"."+name, out)
		}
	}
}

// Time is the timestamp as a time.Time (UTC).
func (t Timestamp) Time() time.Time {
	return time.UnixMilli(int64(t)).UTC()
}
