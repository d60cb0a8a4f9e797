package keyword

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWordTable_SameTerms checks that the memo of plain words changes
// nothing: every text analyses to the same terms and groups with a word
// table as without one, for each stemming, with a custom stop list, on
// hand-picked words around the plain-word rule and on random texts that
// mix them (a table is reused across texts, so later texts hit slots
// filled by earlier ones, and colliding words evict each other).
func TestWordTable_SameTerms(t *testing.T) {
	t.Parallel()

	words := []string{
		"the", "The", "THE", "a", "A", "I", "i", "x", "Caroline", "Caroline's", "caroline’s",
		"meetings", "Meetings", "running", "classes", "queries", "LH", "Lh", "lH", "401",
		"LH401", "getUserName", "ISO", "Iso", "iso", "9001", "e1234", "E1234", "v1.2.3",
		"user@example.com", "138-0013-8000", "1,000,000", "ERR_CONN_RESET", "can't", "it's",
		"état", "Straße", "naïve", "Zürich", "电脑", "東京タワー", "abcdefghijklmn", "abcdefghijklmno", "Abcdefghijklmn", "Abcdefghijklmno", "abcdefghijklmnopqrstuv",
		"abcdefghijklmnopqrstuvw", "Abcdefghijklmnopqrstuv", "Abcdefghijklmnopqrstuvw",
		"(010)", "1234", "co-operate", "e-mail", "Mr.", "U.S.", "OK", "Ok", "ok", "an", "An",
	}
	gaps := []string{" ", "  ", ", ", ". ", "\n", " (", ") ", "-", "/", ""}
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(120) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(gaps[rng.IntN(len(gaps))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, strings.Join(words, " "), strings.Join(words, ""), "")

	for _, opts := range [][]TokenizerOption{
		nil,
		{WithStemming(PluralsOnly)},
		{WithStopWords("caroline", "meeting", "ok")},
	} {
		tk, err := NewTokenizer(opts...)
		require.NoError(t, err)
		tok := tk.(*tokenizer)
		for _, text := range texts {
			want, wantMeta := tok.analyzeWith(text, true, false)
			got, gotMeta := tok.analyzeWith(text, true, true)
			assert.Equal(t, want, got, "text %q", text)
			assert.Equal(t, wantMeta, gotMeta, "text %q", text)
			want, _ = tok.analyzeWith(text, false, false)
			got, _ = tok.analyzeWith(text, false, true)
			assert.Equal(t, want, got, "text %q", text)
		}
	}
}

// TestPlainWord pins the plain-word rule that the memo's correctness
// rests on.
func TestPlainWord(t *testing.T) {
	t.Parallel()

	for w, want := range map[string]bool{
		"a": true, "the": true, "Caroline": true, "Ab": true,
		"": false, "A": false, "I": false, "LH": false, "lH": false, "getUserName": false,
		"e1234": false, "co-operate": false, "état": false,
		strings.Repeat("a", wordKeyMax): true, strings.Repeat("a", wordKeyMax+1): false,
	} {
		assert.Equal(t, want, plainWord(w), "%q", w)
	}
}
