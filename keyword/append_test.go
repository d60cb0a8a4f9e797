package keyword_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/keyword"
)

// sameIndex checks that two indexes hold the same documents, statistics
// and scores for the queries.
func sameIndex(t *testing.T, want, got *keyword.Index, ids []int64, queries ...string) {
	t.Helper()
	assert.Equal(t, want.Stats(), got.Stats())
	for _, id := range ids {
		wt, wl := want.Terms(id)
		gt, gl := got.Terms(id)
		byTerm := func(a, b keyword.TermCount) int { return strings.Compare(a.Term, b.Term) }
		slices.SortFunc(wt, byTerm)
		slices.SortFunc(gt, byTerm)
		assert.Equal(t, wt, gt, "terms of %d", id)
		assert.Equal(t, wl, gl, "length of %d", id)
	}
	for _, q := range queries {
		wantIDs, wantScores := split(want.Search(q, 10, nil))
		gotIDs, gotScores := split(got.Search(q, 10, nil))
		assert.Equal(t, wantIDs, gotIDs, q)
		assert.InDeltaSlice(t, wantScores, gotScores, 1e-12, q)
	}
}

// split returns the results' ids and scores.
func split(rs []keyword.Result) (ids []int64, scores []float64) {
	for _, r := range rs {
		ids, scores = append(ids, r.ID), append(scores, r.Score)
	}
	return ids, scores
}

func TestAppendIsAddOfTheWholeText(t *testing.T) {
	t.Parallel()

	pieces := []string{"the dog learned a trick", "which trick? rolling over", "and the cat sleeps", "dog food prices"}
	grown := keyword.NewIndex(nil)
	whole := keyword.NewIndex(nil)
	for _, ix := range []*keyword.Index{grown, whole} {
		ix.Add(2, "an unrelated cat document about prices")
	}
	all := ""
	for _, p := range pieces {
		grown.Append(1, p) // the first Append creates the document
		all += p + " "
	}
	whole.Add(1, all)
	sameIndex(t, whole, grown, []int64{1, 2}, "dog trick", "cat prices", "rolling", "nothing here")
}

func TestWithdrawUndoesAppend(t *testing.T) {
	t.Parallel()

	ix := keyword.NewIndex(nil)
	ref := keyword.NewIndex(nil)
	for _, x := range []*keyword.Index{ix, ref} {
		x.Add(1, "the dog learned a trick")
		x.Add(2, "cats sleep all day")
	}
	ix.Append(1, "the trick was rolling over twice")
	ix.Append(2, "dogs too")
	ix.Withdraw(1, "the trick was rolling over twice")
	ix.Withdraw(2, "dogs too")
	sameIndex(t, ref, ix, []int64{1, 2}, "dog trick", "rolling over", "cats dogs", "twice")
	assert.Empty(t, ix.Search("rolling twice", 10, nil), "withdrawn terms leave the postings")

	// Withdrawing more than is there stops at zero; the document stays.
	ix.Withdraw(2, "cats cats cats sleep all day never")
	terms, n := ix.Terms(2)
	assert.Empty(t, terms)
	assert.Zero(t, n)
	assert.Equal(t, 2, ix.Len())
	require.NotPanics(t, func() { ix.Withdraw(99, "unknown id") })
	assert.Equal(t, 2, ix.Len())
	_, n1 := ix.Terms(1)
	assert.InDelta(t, float64(n1)/2, ix.Stats().AvgLength, 1e-12, "only document 1's terms are left")
}

func TestAddTokensAndAppendTokensIndexAsAddAndAppend(t *testing.T) {
	t.Parallel()

	texts := []string{"the dog learned a trick", "花生过敏 and peanut allergy", "Deploy error E1234 at 7pm", "dog food prices"}
	byText := keyword.NewIndex(nil)
	byTokens := keyword.NewIndex(nil)
	tok := byTokens.Tokenizer()
	var ids []int64
	for i, text := range texts {
		id := int64(i)
		ids = append(ids, id)
		byText.Add(id, text)
		byTokens.AddTokens(id, tok.Tokens(text))
		byText.Append(100, text)
		byTokens.AppendTokens(100, tok.Tokens(text))
	}
	sameIndex(t, byText, byTokens, append(ids, 100), "dog trick", "peanut 过敏", "e1234", "prices")
	byText.Withdraw(100, texts[0])
	byTokens.Withdraw(100, texts[0])
	sameIndex(t, byText, byTokens, append(ids, 100), "dog trick", "learned")
}

// TestAppendManyTermsKeepsTermsSorted grows documents by many pieces of
// many new and repeated terms (the merge of new terms into a document's
// sorted references) and checks the result against one Add, byte for byte
// in the snapshot, and that withdrawing the pieces again finds every term.
func TestAppendManyTermsKeepsTermsSorted(t *testing.T) {
	t.Parallel()

	grown := keyword.NewIndex(nil)
	whole := keyword.NewIndex(nil)
	var pieces []string
	var all, two strings.Builder
	for i := range 60 {
		var p strings.Builder
		for j := range 40 {
			fmt.Fprintf(&p, "w%dx%d w%dx%d ", (i*7+j*13)%500, j%3, (i*j)%97, i%5)
		}
		pieces = append(pieces, p.String())
		all.WriteString(p.String())
		grown.Append(1, p.String())
		grown.Append(2, pieces[i/2]) // terms it has already, and new ones
		two.WriteString(pieces[i/2])
	}
	whole.Add(1, all.String())
	whole.Add(2, two.String())
	var a, b bytes.Buffer
	require.NoError(t, whole.Export(&a))
	require.NoError(t, grown.Export(&b))
	assert.Equal(t, a.Bytes(), b.Bytes(), "the same index, byte for byte")
	for _, p := range pieces {
		grown.Withdraw(1, p)
	}
	terms, n := grown.Terms(1)
	assert.Empty(t, terms)
	assert.Zero(t, n)
}

// TestCountsIndexAsTokens checks that counting a text once and handing the
// counts to AddCounts and AppendCounts indexes what AddTokens and
// AppendTokens do, byte for byte in the snapshot (term ids are given in
// the order terms first occur either way).
func TestCountsIndexAsTokens(t *testing.T) {
	t.Parallel()

	c := keyword.Count([]string{"b", "a", "b", "c", "b"})
	assert.Equal(t, keyword.Counts{Terms: []string{"b", "a", "c"}, N: []uint32{3, 1, 1}, Len: 5}, c)
	assert.Equal(t, keyword.Counts{}, keyword.Count(nil))

	texts := []string{"the dog learned a trick, the dog", "花生过敏 and peanut allergy", "Deploy error E1234 at 7pm", "dog food prices", ""}
	byTokens := keyword.NewIndex(nil)
	byCounts := keyword.NewIndex(nil)
	tok := byTokens.Tokenizer()
	var ids []int64
	for i, text := range texts {
		id := int64(i)
		ids = append(ids, id)
		toks := tok.Tokens(text)
		byTokens.AddTokens(id, toks)
		byCounts.AddCounts(id, keyword.Count(toks))
		byTokens.AppendTokens(100+id%2, toks)
		byCounts.AppendCounts(100+id%2, keyword.Count(toks))
	}
	sameIndex(t, byTokens, byCounts, append(ids, 100, 101), "dog trick", "peanut 过敏", "e1234", "prices")
	var a, b bytes.Buffer
	require.NoError(t, byTokens.Export(&a))
	require.NoError(t, byCounts.Export(&b))
	assert.Equal(t, a.Bytes(), b.Bytes(), "the same index, byte for byte")
}
