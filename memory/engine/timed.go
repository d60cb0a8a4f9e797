package engine

import (
	"context"
	"time"

	"github.com/agentmem/agentmem/memory/internal/ranking"
)

// dayMargin is the share of the time prior's boost that a record said
// the day before or after a day the query names gets (in TimeRef's
// window, outside ranking.NamedDay's day).
const dayMargin = 0.5

// timePrior is the keyword path's time prior (WithTimePrior, b), for a
// query that may name a time (ranking.TimeCue): when it names a window
// (ranking.TimeRef, relative to the query's reference moment), the
// records said in it score 1 + b times theirs; a named day
// (ranking.NamedDay; "yesterday" of a query that gives its moment,
// ranking.Yesterday) lends to its records (addDay) and the day either side
// of it (TimeRef's margin for time zones and talk after midnight) counts
// half; a recap question is answered with the period's records
// (addRecap). The period's records are listed once for both.
func (n *nsSearch[K]) timePrior(ctx context.Context, b float64, scores *scoreSet) error {
	// Only a query that may name a time asks for its reference moment (the
	// newest record's time: a round trip to some stores).
	ref, err := n.reference(ctx)
	if err != nil {
		return err
	}
	from, to, ok := ranking.TimeRef(n.words, ref)
	if !ok {
		// A recap of the day of asking ("what did we talk about this
		// morning?") names no window of TimeRef's: its period is the day
		// so far.
		if !n.recap() {
			return nil
		}
		if from, to, ok = ranking.Today(n.words, ref); ok {
			return n.recapPeriod(ctx, from, to.Add(time.Microsecond), scores)
		}
		return nil
	}
	dayFrom, dayTo, day := ranking.NamedDay(n.words, ref)
	if !day && !n.asOf.IsZero() {
		// Asked at a known moment, "yesterday" is a calendar day, and the
		// talk of the day of asking is not part of it.
		dayFrom, dayTo, day = ranking.Yesterday(n.words, n.asOf)
	}
	w := n.e.cfg.episodeWeight
	_, best := ranking.Best(scores.all())
	lend, recap := day && w > 0 && best > 0, n.recap()
	var period []int64
	listed := false
	if lend || recap {
		pFrom, pTo := dayFrom, dayTo
		if !day {
			pFrom, pTo = from, to
			if pTo.Equal(ref) {
				// "yesterday", "last week" end now: the newest record is
				// in them (PostgreSQL keeps microseconds). "Two days ago"
				// ends before.
				pTo = ref.Add(time.Microsecond)
			}
			if !n.asOf.IsZero() {
				// Asked at a known moment, a recap of "last week" (or
				// weekend, month, year) is the calendar period's talk,
				// not the prior's wider window (16 days for a week).
				if f, t, ok := ranking.LastPeriod(n.words, n.asOf); ok {
					pFrom, pTo = f, t
				}
			}
		}
		if period, listed, err = n.inPeriod(ctx, pFrom, pTo); err != nil {
			return err
		}
	}
	if lend && listed {
		n.addDay(period, w*best, scores)
	}
	if err := n.ns.Links(ctx, n.scored(scores), nil); err != nil {
		return err
	}
	for _, id := range scores.ids {
		t := n.link(id).Time
		switch {
		case t.Before(from) || !t.Before(to):
		case day && (t.Before(dayFrom) || !t.Before(dayTo)):
			n.scale(scores, id, 1+dayMargin*b)
		default:
			n.scale(scores, id, 1+b)
		}
	}
	if recap && listed {
		n.addRecap(period, scores)
	}
	return nil
}

// recapPeriod answers a recap question with the records said in [from,
// to) (inPeriod, addRecap).
func (n *nsSearch[K]) recapPeriod(ctx context.Context, from, to time.Time, scores *scoreSet) error {
	period, listed, err := n.inPeriod(ctx, from, to)
	if err != nil || !listed {
		return err
	}
	n.addRecap(period, scores)
	return nil
}

// inPeriod returns the records said in [from, to) that the search's scope
// admits, with their links read, and whether the period was listed: not
// when the namespace cannot list a period's records (During), holds none
// in it, or holds more than the search's depth (not one conversation to
// recall).
func (n *nsSearch[K]) inPeriod(ctx context.Context, from, to time.Time) (ids []int64, listed bool, err error) {
	d, ok := n.ns.(During)
	if !ok {
		return nil, false, nil
	}
	ids, err = d.During(ctx, from, to, n.depth+1)
	if err != nil || len(ids) == 0 || len(ids) > n.depth {
		return nil, false, err
	}
	if err := n.ns.Links(ctx, ids, nil); err != nil {
		return nil, false, err
	}
	admitted := ids[:0:0]
	for _, id := range ids {
		if l, ok := n.ns.Link(id); ok && (!n.filtered || n.scope.Admits(l)) {
			admitted = append(admitted, id)
		}
	}
	return admitted, true, nil
}

// addDay lends each of a named day's records (inPeriod) the score lend
// (its caller's w times the best record score), as the best-matching
// conversation lends its records (ranking.EpisodeBonuses), so that "what
// did we talk about on April 29th?" finds that day's talk: a record the
// query's words did not find gets that, one they found gains what its
// conversation did not already lend it (addEpisodes), so that a weak
// match of the day ("you") does not rank below the day's records that
// match nothing.
func (n *nsSearch[K]) addDay(day []int64, lend float64, scores *scoreSet) {
	for _, id := range day {
		if !scores.has(id) {
			scores.set(id, lend)
		} else if more := lend - n.episodeBonus[n.ns.EpisodeOf(id)]; more > 0 {
			scores.add(id, more)
		}
	}
}

// addRecap answers a recap question ("what did we talk about yesterday?",
// "what topics did we discuss on May 2nd?": ranking.Recap), which shares
// no word with its answer, with the records of the period it names
// (inPeriod: the day, for a named one; ranking.TimeRef's window
// otherwise): each scores at least the best score of the namespace's
// records, and at least the most the query's words allow (bound), the
// earliest first, and the namespace's other records, which only its
// filler words ("we", "about") can have found, are left out (period).
// The namespace holds what the question asks (nsFacts.recalled): its
// relevance reads all of the query as covered and held, as it would of a
// question whose words the period's records share. Measured 2026-12-05:
// "what did we talk about yesterday?" of a conversation of four days found
// the day's records at relevance 0.23 (the filler words, which no record
// holds, counted as the query's), 0.78 since; "can you remind me what we
// talked about on November 5th?" 0.16, none surfaced at the default
// minimum, 0.79 since; every development set's recall and false surfaces
// unchanged (`agentmem eval DIR --cross-probes`, small stores too).
func (n *nsSearch[K]) addRecap(period []int64, scores *scoreSet) {
	_, top := ranking.Best(scores.all())
	top = max(top, n.bound)
	n.period = make(map[int64]bool, len(period))
	n.recapped = true
	n.recalled = true
	for i, id := range period {
		scores.set(id, max(scores.get(id), top*(1-float64(i)*1e-9)))
		n.period[id] = true
	}
}

// reference is the moment a query's time references count back from
// ("yesterday", "two weeks ago", "what's next"): the query's own moment
// when it gives one (memory.Query.AsOf: "what did we talk about
// yesterday?" asked as of May 3rd means May 2nd), else the time of the
// namespace's newest record (an agent's memory is written as the talk
// goes on; a store imported from last year's logs is asked about them).
func (n *nsSearch[K]) reference(ctx context.Context) (time.Time, error) {
	if !n.asOf.IsZero() {
		return n.asOf, nil
	}
	return n.ns.Newest(ctx)
}
