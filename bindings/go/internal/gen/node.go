package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// node is one JSON value with its object keys in document order: a
// schema's properties become struct fields in the order the schema gives
// them, which encoding/json's maps would lose.
type node struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys   []string
	fields map[string]*node
	items  []*node
	str    string
	num    json.Number
	bool   bool
}

func parse(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the schema")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o', fields: map[string]*node{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := k.(string)
				if _, dup := n.fields[key]; dup {
					return nil, fmt.Errorf("duplicate key %q", key)
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.fields[key] = v
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return &node{kind: 's', str: t}, nil
	case json.Number:
		return &node{kind: 'n', num: t}, nil
	case bool:
		return &node{kind: 'b', bool: t}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.fields[key]
}

func (n *node) has(key string) bool { return n.get(key) != nil }

func (n *node) text(key string) string {
	if v := n.get(key); v != nil && v.kind == 's' {
		return v.str
	}
	return ""
}

// canonical is the value with object keys sorted: two definitions are the
// same type exactly when their canonical forms are equal.
func (n *node) canonical() string {
	var b strings.Builder
	n.writeCanonical(&b)
	return b.String()
}

func (n *node) writeCanonical(b *strings.Builder) {
	switch n.kind {
	case 'o':
		keys := append([]string(nil), n.keys...)
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			n.fields[k].writeCanonical(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.writeCanonical(b)
		}
		b.WriteByte(']')
	case 's':
		q, _ := json.Marshal(n.str)
		b.Write(q)
	case 'n':
		b.WriteString(n.num.String())
	case 'b':
		if n.bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	default:
		b.WriteString("null")
	}
}

// without is a shallow copy of an object without the given keys.
func (n *node) without(drop ...string) *node {
	out := &node{kind: 'o', fields: map[string]*node{}}
	for _, k := range n.keys {
		skip := false
		for _, d := range drop {
			if k == d {
				skip = true
			}
		}
		if !skip {
			out.keys = append(out.keys, k)
			out.fields[k] = n.fields[k]
		}
	}
	return out
}
