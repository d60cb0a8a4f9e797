package longterm

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// FuzzDecodeRecord: the payload of a log frame (or of a snapshot's
// parents file), whose checksum was right, decodes to ErrCorrupt or to a
// record as Add writes them: children whose spans lie in the text, dim
// floats a child, and the same record when encoded again. It never panics.
func FuzzDecodeRecord(f *testing.F) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 123, time.UTC)
	text := "Ana: I signed up for the Lisbon half marathon. It is in October."
	children := []logChild{{id: 7, start: 0, end: 46, text: text[:46]}, {id: 8, start: 47, end: len(text), text: "It is in October"}} // the second rewritten
	dense := [][]float32{{0.5, -0.25, 1, 2}, {3, 0, -1, 0.125}}
	sparse := [][]float32{{0, 0, 1, 0}, {0, 0.5, 0, 0}}
	for _, rec := range []Record{
		{ID: "r1", Namespace: "ns", Speaker: "Ana", Time: at, Tags: []string{"a", "b"}, Text: text},
		{ID: "r2", Namespace: DefaultNamespace, Text: text},
	} {
		f.Add(encodeAdd(nil, &rec, children, 4, dense))
		f.Add(encodeAdd(nil, &rec, children, 4, sparse))
	}
	f.Add(encodeAdd(nil, &Record{ID: "r3", Text: "x"}, nil, 4, nil))
	f.Add(encodeForget(nil, "r1"))
	f.Add([]byte{})
	f.Add([]byte{9})
	// Records whose checksum would be right and whose numbers do not fit
	// an int, which decodeAdd took and panicked on: a child span starting
	// at -2⁶³ (from 2⁶³), a dim of 2⁶² (dim·children·4 wraps to 0 bytes of
	// vectors) and a sparse record's dim of -2⁶³.
	const (
		empty = "\x00\x00\x00\x00\x00\x00" // id, namespace, speaker, no time, no tags, text
		two63 = "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"
		two62 = "\x80\x80\x80\x80\x80\x80\x80\x80\x40"
	)
	f.Add([]byte("\x01" + empty + "\x01" + "\x00" + two63 + "\x00\x00" + "\x00"))
	f.Add([]byte("\x01" + empty + "\x01" + "\x00\x00\x00\x00" + two62))
	f.Add([]byte("\x03" + empty + "\x01" + "\x00\x00\x00\x00" + two63))
	f.Fuzz(func(t *testing.T, p []byte) {
		typ, body, err := decodeRecord(p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodeRecord: %v is not ErrCorrupt", err)
			}
			return
		}
		if typ == recSeen {
			id, at, err := decodeSeen(body)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("decodeSeen: %v is not ErrCorrupt", err)
				}
				return
			}
			if got, gotAt, err := decodeSeen(encodeSeen(nil, id, at)[1:]); err != nil || got != id || !gotAt.Equal(at) {
				t.Fatalf("seen %q at %v encoded again: %q %v, %v", id, at, got, gotAt, err)
			}
			return
		}
		if typ == recForget {
			id, err := decodeForget(body)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("decodeForget: %v is not ErrCorrupt", err)
				}
				return
			}
			if got, err := decodeForget(encodeForget(nil, id)[1:]); err != nil || got != id {
				t.Fatalf("forget %q encoded again: %q, %v", id, got, err)
			}
			return
		}
		a, err := decodeAdd(typ, body)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodeAdd: %v is not ErrCorrupt", err)
			}
			return
		}
		if a.dim < 0 || len(a.vecs) != len(a.children)*a.dim {
			t.Fatalf("%d floats for %d children of dim %d", len(a.vecs), len(a.children), a.dim)
		}
		vecs := make([][]float32, len(a.children))
		for i := range vecs {
			vecs[i] = a.vecs[i*a.dim : (i+1)*a.dim]
		}
		typ2, body2, err := decodeRecord(encodeAdd(nil, &a.rec, a.children, a.dim, vecs))
		if err != nil {
			t.Fatal(err)
		}
		b, err := decodeAdd(typ2, body2)
		if err != nil {
			t.Fatalf("a decoded record encoded again does not decode: %v", err)
		}
		if !reflect.DeepEqual(a.rec, b.rec) || !reflect.DeepEqual(a.children, b.children) || a.dim != b.dim ||
			!slices.EqualFunc(a.vecs, b.vecs, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			t.Fatalf("record changes when encoded again:\n%+v\n%+v", a, b)
		}
	})
}
