package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// toolArgs says, per MCP tool, which arguments its published input schema
// marks required and which it leaves out: the aliases a model may guess
// (q for query, memory_id for id, …), which the tool still accepts. A
// published alias doubled tools/list and taught a model two names for one
// thing.
var toolArgs = map[string]struct{ required, aliases []string }{
	"search_memory":  {required: []string{"query"}, aliases: []string{"q", "limit", "top_k"}},
	"get_memory":     {required: []string{"id"}, aliases: []string{"memory_id"}},
	"list_memories":  {aliases: []string{"page_size"}},
	"add_memory":     {aliases: []string{"content"}},
	"update_memory":  {required: []string{"id"}, aliases: []string{"memory_id", "content"}},
	"delete_memory":  {required: []string{"id"}, aliases: []string{"memory_id"}},
	"memory_history": {required: []string{"id"}, aliases: []string{"memory_id"}},
}

// inputSchema is the published input schema of the tool name that takes
// In: In's schema without the tool's aliases, with its required
// arguments, and portable (see portable).
func inputSchema[In any](name string) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	args := toolArgs[name]
	for _, a := range args.aliases {
		if _, ok := s.Properties[a]; !ok {
			return nil, fmt.Errorf("server: tool %s: alias %q is no argument", name, a)
		}
		delete(s.Properties, a)
	}
	for _, r := range args.required {
		if _, ok := s.Properties[r]; !ok {
			return nil, fmt.Errorf("server: tool %s: required %q is no argument", name, r)
		}
	}
	s.Required = args.required
	portable(s)
	return s, nil
}

// outputSchema is the published output schema of a tool that returns Out.
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		return nil, err
	}
	portable(s)
	return s, nil
}

// portable makes s and its subschemas say one type each: the inferred
// ["null", "array"] of a Go slice (and ["null", "object"] of a map) is
// the array (object) alone, which every client understands; an absent
// argument is what nil means.
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		i := slices.Index(s.Types, "null")
		s.Type, s.Types = s.Types[1-i], nil
	}
	for _, p := range s.Properties {
		portable(p)
	}
	portable(s.Items)
	portable(s.AdditionalProperties)
}

// decodeArgs decodes a tool call's arguments into in (a pointer to a
// struct) leniently, as a model writes them: an alias of an argument is
// accepted, a number where a string is meant (user_id: 42) is that
// number's text, a string holding a number where a number is meant
// (k: "5") is that number, and null is no argument. Anything else that
// does not fit, or an unknown argument, is an error wrapping
// errs.InvalidArgument that names the argument and says what it wants.
func decodeArgs(raw json.RawMessage, in any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return invalid("the arguments must be a JSON object")
	}
	fields := jsonFields(reflect.TypeOf(in).Elem())
	for name, v := range args {
		t, ok := fields[name]
		if !ok {
			known := make([]string, 0, len(fields))
			for f := range fields {
				known = append(known, f)
			}
			slices.Sort(known)
			return invalid(fmt.Sprintf("unknown argument %q (known: %s)", name, strings.Join(known, ", ")))
		}
		v = bytes.TrimSpace(v)
		switch {
		case string(v) == "null":
			delete(args, name)
		case t.Kind() == reflect.String && isJSONNumber(v):
			args[name], _ = json.Marshal(string(v))
		case isNumberKind(t.Kind()) && len(v) > 0 && v[0] == '"':
			var s string
			if json.Unmarshal(v, &s) == nil && isJSONNumber([]byte(strings.TrimSpace(s))) {
				args[name] = json.RawMessage(strings.TrimSpace(s))
			}
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return invalid(err.Error())
	}
	if err := json.Unmarshal(b, in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(fmt.Sprintf("%s: want %s, got %s %s", te.Field, jsonKind(te.Type), te.Value, shortJSON(args[te.Field])))
		}
		return invalid(err.Error())
	}
	return nil
}

// jsonFields returns the JSON names of a struct's fields, those of
// embedded structs included, and their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		out[cmp.Or(name, f.Name)] = f.Type
	}
	return out
}

func isNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// isJSONNumber reports whether v is a JSON number.
func isJSONNumber(v []byte) bool {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return false
	}
	_, err := strconv.ParseFloat(string(v), 64)
	return err == nil && json.Valid(v)
}

// jsonKind names what a Go type is in JSON, for an error message.
func jsonKind(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case isNumberKind(t.Kind()):
		return "an integer"
	case t.Kind() == reflect.Slice:
		return "an array"
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		return "an object"
	}
	return t.String()
}

// shortJSON is v for an error message, cut to 40 bytes.
func shortJSON(v json.RawMessage) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}
