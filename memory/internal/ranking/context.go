package ranking

import (
	"iter"

	"github.com/agentmem/agentmem/keyword"
)

// Best returns the record with the highest positive score of scores
// (record → score), the lowest record of those tied, and that score; -1
// and 0 if none scores above 0. Both stores find the best direct match
// with it (the best of WithNeighbours, the record whose episode
// EpisodeBonuses lifts), so that they break ties alike.
func Best(scores iter.Seq2[int64, float64]) (record int64, score float64) {
	record = -1
	for id, s := range scores {
		if s > score || (s == score && s > 0 && id < record) {
			record, score = id, s
		}
	}
	return record, score
}

// WithNeighbours is a record's keyword score given what its own words
// score (own), what its neighbours' words lend it (lent: the weighted
// scores of the records just before and after it) and the best own score
// of the query's records (best): own + lent·(1 − own/best).
//
// The neighbours speak for a record in proportion to what its own words
// leave unexplained. An answer that shares no word with the question
// ("Yes, she can roll over.") gets all that the question's turn lends it;
// a record whose own words match as well as any does gets nothing more.
// While what is lent stays below best (with the default weights, 0.3 of
// the record before and 0.3 of the one after, at most 0.6·best), no
// record overtakes the best direct match through its neighbours. Added
// in full, they did: asked sentences taken from RealMem's own turns (a
// lookup, as in reading comprehension), the keyword path found the turn
// first 8 times in 100 less often than without neighbours.
func WithNeighbours(own, lent, best float64) float64 {
	if lent <= 0 || best <= 0 {
		return own
	}
	return own + lent*max(0, 1-own/best)
}

// EpisodeBonuses returns what each episode (a conversation: records each
// at most 12 hours after the one before) lends the records a query found
// in it: w·best·score/top[0].Score for each of the best-matching episodes
// (top, best first, scored as whole documents), and the full w·best for
// the episode of the record whose own words match the query best
// (bestEpisode, -1 for none), whether or not it is among them. A fact
// said once, in a conversation mostly about something else, is not buried
// under a later conversation that talks about the subject at length: its
// conversation lends it as much as the best-matching one lends its turns.
func EpisodeBonuses(w, best float64, top []keyword.Result, bestEpisode int64) map[int64]float64 {
	if len(top) == 0 || top[0].Score <= 0 {
		return nil
	}
	bonus := make(map[int64]float64, len(top)+1)
	for _, e := range top {
		bonus[e.ID] = w * best * e.Score / top[0].Score
	}
	if bestEpisode >= 0 {
		bonus[bestEpisode] = w * best
	}
	return bonus
}
