package eval

import (
	"encoding/json"
	"slices"
)

// CrossProbes returns d with probes added (scripts/cross-probes.py does the
// same from the command line): every question again, asked in another
// conversation, the next in file order (the last's in the first), where
// the right answer is nothing: no evidence, category "probe", qid
// "probe:QID@CONV", and asked at the turn at the same share of that
// conversation as the question's asked_at is of its own (after the whole
// of it when the question has no asked_at, or when that turn would be
// the other conversation's first or past its end). A data set with one
// conversation gets no probes.
func CrossProbes(d *Dataset) *Dataset {
	var convs []string
	turns := map[string][]string{}
	for _, t := range d.Turns {
		if _, ok := turns[t.Conv]; !ok {
			convs = append(convs, t.Conv)
		}
		turns[t.Conv] = append(turns[t.Conv], t.ID)
	}
	out := &Dataset{Turns: d.Turns, Questions: slices.Clone(d.Questions)}
	if len(convs) < 2 {
		return out
	}
	next := map[string]string{}
	for i, c := range convs {
		next[c] = convs[(i+1)%len(convs)]
	}
	category, _ := json.Marshal("probe")
	for _, q := range d.Questions {
		other, ok := next[q.Conv]
		if !ok {
			continue
		}
		own, there := turns[q.Conv], turns[other]
		share := 1.0
		if i := slices.Index(own, q.AskedAt); q.AskedAt != "" && i >= 0 {
			share = float64(i) / float64(len(own))
		}
		p := Question{QID: "probe:" + q.QID + "@" + other, Conv: other, Question: q.Question, Evidence: []string{}, Category: category}
		if at := max(int(share*float64(len(there))), 1); at < len(there) {
			p.AskedAt = there[at]
		}
		out.Questions = append(out.Questions, p)
	}
	return out
}
