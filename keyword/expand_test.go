package keyword_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

func TestIndex_SearchTermsWeighsEachTerm(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t), "apple banana", "apple apple cherry", "cherry date")

	full := ix.Search("apple", 10, nil)
	half := ix.SearchTerms([]keyword.WeightedTerm{{Term: ix.Tokenizer().Tokens("apple")[0], Weight: 0.5}}, 10, nil)
	require.Len(t, half, 2)
	for i := range full {
		assert.Equal(t, full[i].ID, half[i].ID)
		assert.InDelta(t, full[i].Score/2, half[i].Score, 1e-12)
	}
	got := ix.SearchTerms([]keyword.WeightedTerm{{Term: ix.Tokenizer().Tokens("apple")[0], Weight: 0.1}, {Term: ix.Tokenizer().Tokens("date")[0], Weight: 1}, {Term: ix.Tokenizer().Tokens("cherry")[0], Weight: 0}}, 10, func(id int64) bool { return id != 1 })
	assert.Equal(t, []int64{3, 2}, ids(got), "date at full weight first; cherry at 0 ignored; 1 filtered")
	assert.Nil(t, ix.SearchTerms(nil, 10, nil))
	assert.Nil(t, ix.SearchTerms([]keyword.WeightedTerm{{Term: "apple", Weight: 1}}, 0, nil))
}

func TestIndex_TermsAndIDF(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t), "apple banana apple", "cherry")
	terms, n := ix.Terms(1)
	assert.Equal(t, 3, n)
	stem := func(w string) string { return ix.Tokenizer().Tokens(w)[0] }
	assert.ElementsMatch(t, []keyword.TermCount{{Term: stem("apple"), Count: 2}, {Term: stem("banana"), Count: 1}}, terms)
	terms, n = ix.Terms(9)
	assert.Nil(t, terms)
	assert.Zero(t, n)
	assert.Greater(t, ix.IDF(stem("banana")), 0.0)
	assert.Zero(t, ix.IDF("kiwi"))
	ix.Delete(2)
	assert.Zero(t, ix.IDF(stem("cherry")))
}

func TestIndex_QueryTF(t *testing.T) {
	t.Parallel()

	ix := addDocs(plainIndex(t, keyword.WithQueryTF(1)), "apple banana", "cherry date")
	once := ix.Search("apple cherry", 10, nil)
	twice := ix.Search("apple cherry apple", 10, nil)
	require.Len(t, twice, 2)
	assert.Equal(t, []int64{1, 2}, ids(twice), "the repeated word ranks its document first")
	// k3 = 1: qtf 2 weighs (1+1)·2/(1+2) = 4/3.
	assert.InDelta(t, once[0].Score*4/3, twice[0].Score, 1e-12)
	plain := plainIndex(t)
	plain.Add(1, "cherry date")
	plain.Add(2, "apple banana")
	assert.Equal(t, []int64{1, 2}, ids(plain.Search("apple cherry apple", 10, nil)), "without it the repeat does not count: a tie, broken by id")
}

func TestIndex_QueryIDF(t *testing.T) {
	t.Parallel()

	// "trip" and "plan" are each in four of twelve documents, "kayak" in
	// one: plain BM25 ranks the document with both common words above the
	// one with the rare word; weighting the query's words by idf as well
	// turns that round.
	docs := []string{"trip plan", "kayak paddle helmet vest",
		"trip notes", "trip notes", "trip notes", "plan notes", "plan notes", "plan notes",
		"lunch notes", "lunch notes", "bike ride", "bike ride"}
	plain := addDocs(plainIndex(t), docs...)
	idf := addDocs(plainIndex(t, keyword.WithQueryIDF()), docs...)
	q := "kayak trip plan"
	assert.Equal(t, int64(1), plain.Search(q, 10, nil)[0].ID)
	got := idf.Search(q, 10, nil)
	assert.Equal(t, int64(2), got[0].ID)

	// Each term's score is its plain score times its idf.
	stem := func(w string) string { return idf.Tokenizer().Tokens(w)[0] }
	one := plain.Search("kayak", 10, nil)
	two := idf.Search("kayak", 10, nil)
	require.Len(t, two, 1)
	assert.InDelta(t, one[0].Score*idf.IDF(stem("kayak")), two[0].Score, 1e-12)
	assert.InDelta(t, keyword.IDF(4, 1)*keyword.IDF(4, 1), keyword.TermWeight(4, 1, true), 1e-12)
	assert.InDelta(t, keyword.IDF(4, 1), keyword.TermWeight(4, 1, false), 1e-12)
}
