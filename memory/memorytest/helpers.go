package memorytest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory"
)

// base is the time of the suite's records with times: whole seconds, in
// the past, so that any storage precision keeps them.
var base = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// hour returns base plus h hours.
func hour(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }

// topics are words that occur in one text of the suite each, so that a
// search for one finds one record on every path.
var topics = []string{
	"kumquat", "zeppelin", "quasar", "marimba", "obsidian", "tundra",
	"saffron", "walrus", "origami", "basalt", "trombone", "glacier",
}

// sentence returns the suite's i-th distinct text, about topics[i].
func sentence(i int) string {
	return fmt.Sprintf("The note about the %s was written by %s on day %s.",
		topics[i%len(topics)], people[i%len(people)], days[i%len(days)])
}

var (
	people = []string{"Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta"}
	days   = []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
)

// shared is a word that the texts of harbor contain, and absent one
// that no text of the suite contains.
const (
	shared = "harbor"
	absent = "xylqvoz"
)

// harbor returns the i-th text that contains the word shared.
func harbor(i int) string {
	return fmt.Sprintf("At the %s the %s was unloaded by %s.", shared, topics[i%len(topics)], people[i%len(people)])
}

// modes are the retrieval modes of a Query.
var modes = []memory.Mode{memory.Hybrid, memory.VectorOnly, memory.KeywordOnly}

// everything is a Query.MinScore that every vector-path match passes.
const everything = -1

// diffRecord says how got differs from want, as stored by Add: the same
// id, text, speaker and tags (nil and empty alike), a time equal to
// want's (when want has one) and want's namespace (when want names one).
func diffRecord(want, got memory.Record) string {
	var d []string
	if got.ID != want.ID {
		d = append(d, fmt.Sprintf("ID %q, want %q", got.ID, want.ID))
	}
	if got.Text != want.Text {
		d = append(d, fmt.Sprintf("Text %q, want %q", got.Text, want.Text))
	}
	if !want.Time.IsZero() && !got.Time.Equal(want.Time) {
		d = append(d, fmt.Sprintf("Time %v, want %v", got.Time, want.Time))
	}
	if want.Namespace != "" && got.Namespace != want.Namespace {
		d = append(d, fmt.Sprintf("Namespace %q, want %q", got.Namespace, want.Namespace))
	}
	if got.Speaker != want.Speaker {
		d = append(d, fmt.Sprintf("Speaker %q, want %q", got.Speaker, want.Speaker))
	}
	if !slices.Equal(got.Tags, want.Tags) {
		d = append(d, fmt.Sprintf("Tags %q, want %q", got.Tags, want.Tags))
	}
	return strings.Join(d, "; ")
}

// diffHit says how a hit differs from the record it found: the same id
// and text, and metadata that is either the record's or empty (a memory
// may keep none).
func diffHit(want memory.Record, h memory.Hit) string {
	var d []string
	if h.ID != want.ID {
		d = append(d, fmt.Sprintf("ID %q, want %q", h.ID, want.ID))
	}
	if h.Text != want.Text {
		d = append(d, fmt.Sprintf("Text %q, want %q", h.Text, want.Text))
	}
	if !h.Time.IsZero() && !want.Time.IsZero() && !h.Time.Equal(want.Time) {
		d = append(d, fmt.Sprintf("Time %v, want %v or zero", h.Time, want.Time))
	}
	if h.Namespace != "" && want.Namespace != "" && h.Namespace != want.Namespace {
		d = append(d, fmt.Sprintf("Namespace %q, want %q or empty", h.Namespace, want.Namespace))
	}
	if h.Speaker != "" && h.Speaker != want.Speaker {
		d = append(d, fmt.Sprintf("Speaker %q, want %q or empty", h.Speaker, want.Speaker))
	}
	if len(h.Tags) > 0 && !slices.Equal(h.Tags, want.Tags) {
		d = append(d, fmt.Sprintf("Tags %q, want %q or none", h.Tags, want.Tags))
	}
	return strings.Join(d, "; ")
}

// checkHits checks the rules every result list keeps: best first (scores
// do not increase, but that a later version of a statement may come
// before the earlier: Hit.Score), each record once, finite scores,
// snippets that are parts of the text, and neighbours only when asked
// for.
func checkHits(t tb, hits []memory.Hit, neighbours int, what string) {
	t.Helper()
	seen := map[string]bool{}
	for i, h := range hits {
		if seen[h.ID] {
			t.Errorf("rule: a search returns each record once: %s: id %q twice (%v)", what, h.ID, hitIDs(hits))
		}
		seen[h.ID] = true
		if math.IsNaN(float64(h.Score)) || math.IsInf(float64(h.Score), 0) {
			t.Errorf("rule: a hit's Score is a number: %s: hit %d (%q) scores %v", what, i, h.ID, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score && !slices.ContainsFunc(hits[:i], func(later memory.Hit) bool { return laterVersion(later, h) }) {
			t.Errorf("rule: hits come best first (scores do not increase, but after a later version of the same speaker): %s: hit %d (%q) %v after hit %d (%q) %v",
				what, i, h.ID, h.Score, i-1, hits[i-1].ID, hits[i-1].Score)
		}
		for _, s := range h.Snippets {
			if !strings.Contains(h.Text, s) {
				t.Errorf("rule: a hit's Snippets are parts of its Text: %s: snippet %q of %q", what, s, h.Text)
			}
		}
		if len(h.Before) > neighbours || len(h.After) > neighbours {
			t.Errorf("rule: a hit has at most Query.Neighbours records before and after it: %s: %d before, %d after, asked for %d",
				what, len(h.Before), len(h.After), neighbours)
		}
	}
}

// laterVersion reports whether later may be placed before earlier though
// it scores less (memory.Hit.Score): its namespace's and speaker's, said
// after it.
func laterVersion(later, earlier memory.Hit) bool {
	from := func(h memory.Hit) time.Time { return (&memory.Record{Time: h.Time, ValidFrom: h.ValidFrom}).Since() }
	return later.Score < earlier.Score && later.Namespace == earlier.Namespace && later.Speaker == earlier.Speaker && from(later).After(from(earlier))
}

func hitIDs(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func recordIDs(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// find returns the hit with the given id, or nil.
func find(hits []memory.Hit, id string) *memory.Hit {
	for i := range hits {
		if hits[i].ID == id {
			return &hits[i]
		}
	}
	return nil
}

// add stores rec, failing the rule (with msg) if Add fails, and returns
// rec with the id Add returned.
func (s *subject) add(e *env, rec memory.Record, msg string) memory.Record {
	e.t.Helper()
	id, err := s.rs.Add(e.ctx(), rec)
	require.NoError(e.t, err, "%s: Add(%q)", msg, rec.ID)
	if rec.ID != "" {
		require.Equal(e.t, rec.ID, id, "rule: Add returns the id of a record that names one")
	}
	rec.ID = id
	return rec
}

// addNotes stores texts as notes (records without a speaker) n0, n1, …,
// written a minute apart, failing the rule if an Add fails.
func (s *subject) addNotes(e *env, texts ...string) {
	e.t.Helper()
	for i, text := range texts {
		s.add(e, memory.Record{ID: fmt.Sprint("n", i), Text: text, Time: hour(0).Add(time.Duration(i) * time.Minute)}, "rule: Add succeeds")
	}
}

// query runs q, failing the rule if it fails.
func (s *subject) query(e *env, q memory.Query, msg string) []memory.Hit {
	e.t.Helper()
	if q.MinRelevance == 0 {
		// The rules check what a search finds; how much a memory leaves
		// out by default is its own choice (QueryRelevance checks what a
		// minimum means).
		q.MinRelevance = everything
	}
	hits, err := s.q.Query(e.ctx(), q)
	require.NoError(e.t, err, "%s: Query %+v", msg, q)
	checkHits(e.t, hits, q.Neighbours, fmt.Sprintf("Query(%q, %v)", q.Text, q.Mode))
	checkRelevance(e.t, hits, q.MinRelevance, fmt.Sprintf("Query(%q, %v)", q.Text, q.Mode))
	return hits
}

// checkRelevance checks the hits' relevance against the query's minimum:
// each in [0, 1], none below a positive minimum. A memory that computes no
// relevance (all 0) passes when asked for none (min ≤ 0).
func checkRelevance(t tb, hits []memory.Hit, min float32, what string) {
	t.Helper()
	for i, h := range hits {
		if !(h.Relevance >= 0 && h.Relevance <= 1) {
			t.Errorf("rule: a hit's Relevance is in [0, 1]: %s: hit %d (%q) has %v", what, i, h.ID, h.Relevance)
		}
		if min > 0 && h.Relevance < min {
			t.Errorf("rule: no hit is below the query's MinRelevance: %s: hit %d (%q) has %v < %v", what, i, h.ID, h.Relevance, min)
		}
	}
}

// list runs List, failing the rule if it fails.
func (s *subject) list(e *env, opts memory.ListOptions, msg string) ([]memory.Record, int) {
	e.t.Helper()
	recs, total, err := s.l.List(e.ctx(), opts)
	require.NoError(e.t, err, "%s: List %+v", msg, opts)
	if opts.Offset == 0 && opts.Limit == 0 && len(recs) != total {
		e.t.Errorf("rule: List without Offset and Limit lists every record it counts: %d listed, total %d", len(recs), total)
	}
	return recs, total
}

// count returns how many records the memory holds, by List, or -1 when
// it is no Lister.
func (s *subject) count(e *env) int {
	e.t.Helper()
	if s.l == nil {
		return -1
	}
	_, total := s.list(e, memory.ListOptions{}, "rule: List succeeds")
	return total
}

// checkCount checks that the memory holds n records, when it can tell.
func (s *subject) checkCount(e *env, n int, msg string) {
	e.t.Helper()
	if got := s.count(e); got >= 0 && got != n {
		e.t.Errorf("%s: List's total is %d, want %d", msg, got, n)
	}
}

// ChinesePassages are four encyclopedia paragraphs in Chinese (about 190
// characters each): a namespace of passages, as the relevance of a
// Chinese query reads them (engine.DocumentLength), for stores' tests.
var ChinesePassages = []string{
	"长江是中国第一长河，全长约六千三百公里，发源于青藏高原唐古拉山脉各拉丹冬峰西南侧，干流流经青海、西藏、四川、云南、重庆、湖北、湖南、江西、安徽、江苏和上海，最后在上海崇明岛附近注入东海。长江流域面积约一百八十万平方公里，约占中国陆地总面积的五分之一。三峡工程位于湖北宜昌，是世界上装机容量最大的水电站，于二零零六年完成大坝主体建设，兼有防洪、发电和航运等综合效益。",
	"大熊猫是中国特有的哺乳动物，主要生活在四川、陕西和甘肃的山区竹林中。成年大熊猫体长约一点五米，体重可达一百公斤以上，每天要花十多个小时进食，食物中百分之九十九是竹子。野生大熊猫的繁殖率很低，雌性每两年左右才产一次仔，幼仔出生时只有一百克左右。经过多年的保护，野生大熊猫数量已经增加到一千八百多只，世界自然保护联盟在二零一六年将其受威胁等级从濒危降为易危。",
	"活字印刷术是北宋时期毕昇发明的，沈括在《梦溪笔谈》中记载了这项技术。毕昇用胶泥刻字，每字一印，用火烧硬后成为活字，排版时把活字排列在铁板上，用松脂和蜡固定，印完后再加热取下，可以反复使用。与雕版印刷相比，活字印刷节省了大量的时间和材料，后来又出现了木活字和铜活字。这项发明经由丝绸之路传播到中亚和欧洲，对世界文明的发展产生了深远的影响。",
	"中国是茶的故乡，饮茶的历史可以追溯到数千年前。唐代陆羽著有《茶经》，是世界上第一部关于茶的专著，系统地总结了茶的起源、种植、采摘、制作和饮用方法。中国茶叶按照加工方法主要分为绿茶、红茶、乌龙茶、白茶、黄茶和黑茶六大类。西湖龙井产于浙江杭州，是著名的绿茶；安溪铁观音产于福建，属于乌龙茶。明清时期，茶叶通过海上贸易大量出口到欧洲，成为重要的商品。",
}

// NoteRecords returns six unrelated facts a user might ask an agent to
// keep ("My sister Ana lives in Porto."), a minute apart from at, twice:
// in namespace "notes" all said by "user" (ids m0 … m5), and in "chat"
// said in turn by "user" and "assistant" (c0 … c5). For stores' tests of
// what a search brings back beside the record that answers ("who lives in
// Porto?"): a monologue's neighbours, or a conversation's.
func NoteRecords(at time.Time) []memory.Record {
	var recs []memory.Record
	for i, text := range []string{
		"My cat is called Miso and she eats salmon twice a day.",
		"The wifi password at the cabin is pinecone42.",
		"I prefer aisle seats on long flights.",
		"My sister Ana lives in Porto.",
		"Quarterly report is due on the last Friday of June.",
		"The car needs new tyres before winter.",
	} {
		t := at.Add(time.Duration(i) * time.Minute)
		recs = append(recs,
			memory.Record{ID: fmt.Sprint("m", i), Namespace: "notes", Speaker: "user", Text: text, Time: t},
			memory.Record{ID: fmt.Sprint("c", i), Namespace: "chat", Speaker: []string{"user", "assistant"}[i%2], Text: text, Time: t})
	}
	return recs
}
