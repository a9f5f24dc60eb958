package tether

import "encoding/json"

// Optional is a field the schema lets a document leave out. Present says
// whether the document had it; Value is what it held (for Optional[*T], a
// nil Value is an explicit null). The generated codecs leave an absent
// field out, so a decoded document encodes back exactly as it came.
type Optional[T any] struct {
	Value   T
	Present bool
}

// Some is a present field.
func Some[T any](v T) Optional[T] { return Optional[T]{Value: v, Present: true} }

// Get returns the value and whether the field was present.
func (o Optional[T]) Get() (T, bool) { return o.Value, o.Present }

// Or returns the value, or fallback when the field was absent.
func (o Optional[T]) Or(fallback T) T {
	if o.Present {
		return o.Value
	}
	return fallback
}

// MarshalJSON encodes the value (an absent field alone encodes as null;
// inside a generated struct it is left out).
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if !o.Present {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// UnmarshalJSON marks the field present and decodes its value.
func (o *Optional[T]) UnmarshalJSON(data []byte) error {
	o.Present = true
	return json.Unmarshal(data, &o.Value)
}

// Deref returns what a may-be-absent-or-null field holds, and false when
// it was absent or null.
func Deref[T any](o Optional[*T]) (T, bool) {
	if o.Present && o.Value != nil {
		return *o.Value, true
	}
	var zero T
	return zero, false
}
