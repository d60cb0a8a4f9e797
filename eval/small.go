package eval

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
)

// smallNoteBytes is the longest turn SmallStores takes for a distractor:
// a note, not a pasted document.
const smallNoteBytes = 400

// SmallStores returns small memories made from d, the shape of an agent's
// first days: for each question with evidence, a conversation
// "small:QID" of its evidence turns and size turns of d's other
// conversations (distractors, in random order), and a conversation
// "small-probe:QID" of size + len(evidence) other distractors where the
// question is asked again as a probe (no evidence, category "probe").
// Every turn is a note (no speaker, as `agentmem add` writes one) of the
// evidence's date, and every question is asked with its whole store
// written (no asked_at). Distractors are turns of at most 400 bytes,
// drawn with seed: the same arguments give the same stores. A question
// whose evidence d does not hold is left out, and so is every question of
// a data set with one conversation (nothing to draw distractors from).
func SmallStores(d *Dataset, size int, seed uint64) *Dataset {
	type key struct{ conv, id string }
	byID := map[key]Turn{}
	var pool []Turn
	for _, t := range d.Turns {
		byID[key{t.Conv, t.ID}] = t
		if c := t.Content(); c != "" && len(c) <= smallNoteBytes {
			pool = append(pool, t)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a11))
	out := &Dataset{}
	// distractors draws n turns of pool from conversations other than conv,
	// nil when there are not that many.
	distractors := func(conv string, n int) []Turn {
		var other []int
		for i, t := range pool {
			if t.Conv != conv {
				other = append(other, i)
			}
		}
		if len(other) < n {
			return nil
		}
		rng.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		ts := make([]Turn, n)
		for i, p := range other[:n] {
			ts[i] = pool[p]
		}
		return ts
	}
	session := json.RawMessage("1")
	note := func(conv string, i int, t Turn, date string) Turn {
		return Turn{Conv: conv, Session: session, Date: date, ID: fmt.Sprintf("T%d", i), Text: t.Text, ImageCaption: t.ImageCaption}
	}
	probe, _ := json.Marshal("probe")
	for _, q := range d.Questions {
		var ev []Turn
		for _, id := range q.Evidence {
			if t, ok := byID[key{q.Conv, id}]; ok {
				ev = append(ev, t)
			}
		}
		if len(ev) == 0 || len(ev) < len(q.Evidence) {
			continue
		}
		dis := distractors(q.Conv, size+size+len(ev))
		if dis == nil {
			continue
		}
		date := ev[0].Date
		conv := "small:" + q.QID
		items := slices.Concat(ev, dis[:size])
		order := rng.Perm(len(items))
		small := Question{QID: conv, Conv: conv, Question: q.Question, Category: q.Category}
		for i, p := range order {
			out.Turns = append(out.Turns, note(conv, i+1, items[p], date))
			if p < len(ev) {
				small.Evidence = append(small.Evidence, fmt.Sprintf("T%d", i+1))
			}
		}
		slices.Sort(small.Evidence)
		conv = "small-probe:" + q.QID
		for i, t := range dis[size:] {
			out.Turns = append(out.Turns, note(conv, i+1, t, date))
		}
		out.Questions = append(out.Questions, small, Question{QID: conv, Conv: conv, Question: q.Question, Evidence: []string{}, Category: probe})
	}
	return out
}
