package keyword

// QueryGroup is one word or code of a query as [Index.Search] scores it:
// its whole forms (Main: "138-0013-8000", "13800138000") and its parts
// (Parts: "138", "0013", "8000"). A plain word has one Main form and no
// Parts.
type QueryGroup struct {
	Main, Parts []string
}

// QueryGroups returns the distinct groups of query's terms as
// [Index.Search] scores them with tok (a nil tok means NewTokenizer() with
// its defaults), so that a BM25 index kept elsewhere (in a database, say)
// ranks exactly as an Index does: each group counts once, the best of its
// Main forms or [PartWeight] times the mean of its Parts, whichever is
// higher. With a Tokenizer not made by [NewTokenizer], each distinct term
// is a group of its own.
func QueryGroups(tok Tokenizer, query string) []QueryGroup {
	if tok == nil {
		tok, _ = NewTokenizer()
	}
	ix := &Index{tok: tok}
	gs := ix.groups(query)
	out := make([]QueryGroup, len(gs))
	for i, g := range gs {
		out[i] = QueryGroup{Main: g.main, Parts: g.parts}
	}
	return out
}
