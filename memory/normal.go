package memory

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// NormalText returns s as duplicates are compared ([Facts.Remember]): in
// Unicode compatibility form (NFKC), case-folded, with runs of white space
// made one space and the spaces and punctuation at either end cut. "I live
// in Paris." and "i live in  paris" are the same text; "I live in Paris"
// and "I lived in Paris" are not.
func NormalText(s string) string {
	s = cases.Fold().String(norm.NFKC.String(s))
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}
