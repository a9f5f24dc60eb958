// Package tether is Tether's documents and live API for Go hosts.
//
// The types of every public document (`tether schema DOC`: history,
// attempt, probe-report, endpoint-test, inventory, inventory-changes,
// plugins, collect, sessions, session and the status-* documents of
// `tether serve`'s API) are generated from Tether's JSON Schemas by
// bindings/go/cmd/tether-gen-go into documents_gen.go; Documents lists
// them. A field's Go type says what the schema allows:
//
//	T               required, never null
//	*T              required, may be null (nil)
//	Optional[T]     may be absent, never null
//	Optional[*T]    may be absent or null
//
// and each struct's codecs give back exactly what a document had: a
// decoded document encodes to the same JSON value, absent fields absent
// and nulls null.
//
// Vocabularies are open: an enumeration (DisplayStatus, ReasonCode, …) is
// a string type with the values this binding knows as constants; a value
// it does not know decodes as itself (Known reports false) and never
// fails a document. Fields this binding does not know are kept in each
// struct's UnknownFields and encoded back; DecodeStrict refuses them.
//
// Client speaks to `tether serve`'s API: the bearer token, the exact Host
// the service answers, no foreign Origin, every error body decoded as the
// status-error document (APIError), and the event streams followed with
// reconnection and Last-Event-ID.
package tether

//go:generate go run ../cmd/tether-gen-go -schemas ../schemas -out documents_gen.go
