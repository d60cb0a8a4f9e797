package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentmem/agentmem/memory"
)

// A Story is one scenario of facts that change (a move, a new job, a
// renamed project, a changed preference): the versions of one fact, each
// superseding the one before, among distractors (facts about other people
// and other things), and a question the latest version answers. Each story
// is its own namespace.
type Story struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Versions    []FactLine `json:"versions"`
	Distractors []FactLine `json:"distractors"`
	Question    string     `json:"question"`
}

// A FactLine is one memory of a story.
type FactLine struct {
	ID   string    `json:"id"`
	Text string    `json:"text"`
	Time time.Time `json:"time"`
}

// A storyKind is a kind of story: the templates of a fact's first
// version, of a change, and of the question, where %[1]s is the person
// (or project) and %[2]s the value.
type storyKind struct {
	kind            string
	first, changes  []string
	question        string
	values, persons []string
}

// storyLanguage is what the stories of one language are made of: their
// kinds, and the distractors about the same person (unrelated), which
// share a name with the question but not its subject.
type storyLanguage struct {
	kinds     []storyKind
	unrelated []string
}

var english = storyLanguage{
	kinds: []storyKind{
		{"move", []string{"%[1]s lives in %[2]s.", "%[1]s has an apartment in %[2]s and lives there."},
			[]string{"%[1]s moved to %[2]s last month.", "%[1]s has relocated to %[2]s.", "These days %[1]s lives in %[2]s."},
			"Where does %[1]s live?", cities, people},
		{"job", []string{"%[1]s works at %[2]s as an engineer.", "%[1]s has a job at %[2]s."},
			[]string{"%[1]s started a new job at %[2]s.", "%[1]s left for %[2]s and works there now.", "%[1]s joined %[2]s this spring."},
			"Where does %[1]s work?", companies, people},
		{"rename", []string{"The %[1]s project is called %[2]s.", "We named the %[1]s project %[2]s."},
			[]string{"We renamed the %[1]s project to %[2]s.", "The %[1]s project is now called %[2]s.", "From now on the %[1]s project goes by %[2]s."},
			"What is the %[1]s project called?", codenames, projects},
		{"food", []string{"%[1]s's favourite food is %[2]s.", "%[1]s likes %[2]s more than any other food."},
			[]string{"These days %[1]s prefers %[2]s over anything else.", "%[1]s's new favourite food is %[2]s.", "%[1]s is all about %[2]s now."},
			"What is %[1]s's favourite food?", foods, people},
		{"phone", []string{"%[1]s's phone number is %[2]s.", "You can reach %[1]s at %[2]s."},
			[]string{"%[1]s changed phone number to %[2]s.", "%[1]s's new number is %[2]s.", "%[1]s can be reached at %[2]s from now on."},
			"What is %[1]s's phone number?", phones, people},
		{"car", []string{"%[1]s drives a %[2]s.", "%[1]s owns a %[2]s."},
			[]string{"%[1]s sold the old car and now drives a %[2]s.", "%[1]s bought a %[2]s.", "%[1]s switched to a %[2]s."},
			"What car does %[1]s drive?", cars, people},
	},
	unrelated: []string{"%[1]s enjoys hiking on weekends.", "%[1]s has two younger brothers.", "%[1]s is learning to play the cello.",
		"%[1]s ran a half marathon in spring.", "%[1]s reads a lot of science fiction.", "%[1]s volunteers at the animal shelter."},
}

var (
	people    = []string{"Maya", "Jonas", "Priya", "Tomás", "Aiko", "Lena", "Omar", "Grace", "Felix", "Nadia", "Ravi", "Sofia", "Ivan", "Chloe", "Mateo", "Hana"}
	cities    = []string{"Paris", "Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Denver", "Oslo", "Madrid", "Seoul", "Dublin", "Quito"}
	companies = []string{"Acme Robotics", "Globex", "Initech", "Umbrella Labs", "Stark Industries", "Wayne Enterprises", "Hooli", "Vandelay Imports", "Soylent Foods", "Cyberdyne"}
	codenames = []string{"Bluebird", "Nightjar", "Granite", "Aurora", "Kestrel", "Tundra", "Orchid", "Falcon", "Mosaic", "Beacon"}
	projects  = []string{"billing", "search", "mobile", "onboarding", "analytics", "payments", "checkout", "reporting"}
	foods     = []string{"ramen", "tacos", "lasagna", "dumplings", "paella", "curry", "sushi", "pierogi", "falafel", "risotto"}
	phones    = []string{"555-0142", "555-0199", "555-0173", "555-0108", "555-0126", "555-0187", "555-0134", "555-0161"}
	cars      = []string{"Volvo estate", "Tesla Model 3", "Fiat Panda", "Subaru Outback", "Toyota Prius", "Mini Cooper", "Ford Ranger", "Kia Niro"}
)

// chinese are the same kinds of story in Chinese, each fact said in the
// words a Chinese speaker would use (the question's 工作 is not the
// statement's 上班), the names and values Chinese ones.
var chinese = storyLanguage{
	kinds: []storyKind{
		{"move", []string{"%[1]s住在%[2]s。", "%[1]s在%[2]s有一套公寓，住在那里。"},
			[]string{"%[1]s上个月搬到了%[2]s。", "%[1]s已经搬去%[2]s了。", "%[1]s现在住在%[2]s。"},
			"%[1]s住在哪里？", chineseCities, chinesePeople},
		{"job", []string{"%[1]s在%[2]s工作，是一名工程师。", "%[1]s在%[2]s上班。"},
			[]string{"%[1]s换了工作，现在在%[2]s上班。", "%[1]s跳槽去了%[2]s。", "%[1]s今年春天加入了%[2]s。"},
			"%[1]s在哪里工作？", chineseCompanies, chinesePeople},
		{"rename", []string{"%[1]s项目叫%[2]s。", "我们把%[1]s项目命名为%[2]s。"},
			[]string{"我们把%[1]s项目改名为%[2]s了。", "%[1]s项目现在叫%[2]s。", "从现在起%[1]s项目改叫%[2]s。"},
			"%[1]s项目叫什么名字？", chineseCodenames, chineseProjects},
		{"food", []string{"%[1]s最喜欢的食物是%[2]s。", "%[1]s最爱吃%[2]s。"},
			[]string{"%[1]s最近更喜欢吃%[2]s了。", "%[1]s现在最喜欢的食物是%[2]s。", "%[1]s如今迷上了%[2]s。"},
			"%[1]s最喜欢吃什么？", chineseFoods, chinesePeople},
		{"phone", []string{"%[1]s的电话号码是%[2]s。", "可以打%[2]s联系%[1]s。"},
			[]string{"%[1]s换了电话号码，新号码是%[2]s。", "%[1]s的新号码是%[2]s。", "从现在起可以打%[2]s找%[1]s。"},
			"%[1]s的电话号码是多少？", chinesePhones, chinesePeople},
		{"car", []string{"%[1]s开一辆%[2]s。", "%[1]s有一辆%[2]s。"},
			[]string{"%[1]s卖掉了旧车，现在开%[2]s。", "%[1]s买了一辆%[2]s。", "%[1]s换成了%[2]s。"},
			"%[1]s开什么车？", chineseCars, chinesePeople},
	},
	unrelated: []string{"%[1]s周末喜欢去爬山。", "%[1]s有两个弟弟。", "%[1]s在学拉大提琴。",
		"%[1]s春天跑了一个半程马拉松。", "%[1]s读了很多科幻小说。", "%[1]s在动物收容所做志愿者。"},
}

var (
	chinesePeople    = []string{"王芳", "李娜", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄丽", "周杰", "吴昊", "徐婷", "孙悦", "马超", "朱琳", "胡斌", "郭靖"}
	chineseCities    = []string{"巴黎", "柏林", "里斯本", "大阪", "多伦多", "内罗毕", "丹佛", "奥斯陆", "马德里", "首尔", "都柏林", "基多"}
	chineseCompanies = []string{"华为", "腾讯", "阿里巴巴", "字节跳动", "小米", "百度", "京东", "美团", "网易", "比亚迪"}
	chineseCodenames = []string{"青鸟", "夜莺", "磐石", "极光", "红隼", "冻土", "兰花", "猎鹰", "马赛克", "灯塔"}
	chineseProjects  = []string{"计费", "搜索", "移动端", "新手引导", "数据分析", "支付", "结算", "报表"}
	chineseFoods     = []string{"拉面", "饺子", "火锅", "烤鸭", "麻婆豆腐", "小笼包", "寿司", "咖喱", "烧烤", "炒饭"}
	chinesePhones    = []string{"138-0013-0142", "139-0021-0199", "136-0035-0173", "137-0048-0108", "135-0052-0126", "150-0067-0187", "151-0079-0134", "152-0086-0161"}
	chineseCars      = []string{"沃尔沃旅行车", "特斯拉Model 3", "菲亚特熊猫", "斯巴鲁傲虎", "丰田普锐斯", "迷你Cooper", "福特猛禽", "起亚极睿"}
)

// GenerateStories returns n stories in English made from seed: each of
// the kinds in turn, one to three changes (a second one in a third of the
// stories), each version weeks after the one before, two distractors about
// other persons' same fact and two about the person's other things.
func GenerateStories(seed uint64, n int) []Story {
	return english.generate(seed, n)
}

// GenerateChineseStories returns n stories in Chinese made from seed as
// GenerateStories makes them in English: the same kinds, each fact said
// in Chinese words.
func GenerateChineseStories(seed uint64, n int) []Story {
	return chinese.generate(seed, n)
}

// A StorySuite is a fact-change scenario suite in testdata/facts: its
// file's name there and the generator that writes it, as Generate(1, 240).
type StorySuite struct {
	File, Name string // Name: Generate's, for messages
	Generate   func(seed uint64, n int) []Story
}

// StorySuites are the suites every store's tests run (eval's
// TestStories_FileStore, memory/postgres's TestStories): English, then
// Chinese.
var StorySuites = []StorySuite{
	{"stories.jsonl", "GenerateStories", GenerateStories},
	{"stories-zh.jsonl", "GenerateChineseStories", GenerateChineseStories},
}

func (l storyLanguage) generate(seed uint64, n int) []Story {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	base := time.Date(2023, 1, 2, 9, 0, 0, 0, time.UTC)
	out := make([]Story, n)
	for i := range out {
		k := l.kinds[i%len(l.kinds)]
		s := &out[i]
		s.ID = fmt.Sprintf("story%03d", i)
		s.Kind = k.kind
		who := k.persons[rng.IntN(len(k.persons))]
		vals := pick(rng, k.values, 5)
		versions := 2
		if rng.IntN(3) == 0 {
			versions = 3
		}
		at := base.Add(time.Duration(rng.IntN(400)) * 24 * time.Hour)
		for v := range versions {
			tmpl := k.first[rng.IntN(len(k.first))]
			if v > 0 {
				tmpl = k.changes[rng.IntN(len(k.changes))]
				at = at.Add(time.Duration(20+rng.IntN(120)) * 24 * time.Hour)
			}
			s.Versions = append(s.Versions, FactLine{ID: fmt.Sprintf("%s-v%d", s.ID, v), Text: fmt.Sprintf(tmpl, who, vals[v]), Time: at})
		}
		others := pick(rng, slices.DeleteFunc(slices.Clone(k.persons), func(p string) bool { return p == who }), 2)
		first := s.Versions[0].Time
		for j, o := range others {
			s.Distractors = append(s.Distractors, FactLine{ID: fmt.Sprintf("%s-d%d", s.ID, j),
				Text: fmt.Sprintf(k.first[rng.IntN(len(k.first))], o, vals[3+j]), Time: first.Add(time.Duration(1+j) * time.Hour)})
		}
		for j, u := range pick(rng, l.unrelated, 2) {
			s.Distractors = append(s.Distractors, FactLine{ID: fmt.Sprintf("%s-d%d", s.ID, 2+j),
				Text: fmt.Sprintf(u, who), Time: first.Add(time.Duration(3+j) * 24 * time.Hour)})
		}
		s.Question = fmt.Sprintf(k.question, who)
	}
	return out
}

// pick returns n distinct elements of from, in random order.
func pick[T any](rng *rand.Rand, from []T, n int) []T {
	idx := rng.Perm(len(from))[:n]
	out := make([]T, n)
	for i, j := range idx {
		out[i] = from[j]
	}
	return out
}

// A FactStore is a memory whose facts change and that answers queries.
type FactStore interface {
	memory.Facts
	memory.Querier
}

// FactReport is what RunStories measured: over the stories' questions
// asked now, the share whose top k holds a superseded version (Stale), the
// share that holds the current one (Current) and the share that holds it
// above every superseded version (CurrentFirst: what an agent that reads
// its hits in order takes for the fact); over the questions asked
// as of a moment between two versions, the share whose top k holds the
// version valid then (AsOfValid) and the share that holds a later one
// (AsOfLater).
type FactReport struct {
	StoryOptions
	Stories, Questions, AsOfQuestions int
	Stale, Current, CurrentFirst      float64
	AsOfValid, AsOfLater              float64
}

// StoryOptions say how RunStories writes and asks.
type StoryOptions struct {
	// Supersede writes each version as superseding the one before
	// (memory.Facts.Supersede); otherwise it is added beside it, as a
	// memory that keeps no versions stores it.
	Supersede bool
	// K is how many hits a question reads (0: 5).
	K int
	// MinRelevance is the questions' memory.Query.MinRelevance (0: the
	// store's default threshold).
	MinRelevance float32
}

// RunStories writes the stories into st, each in its namespace, as o
// says, and asks their questions: now, and as of the middle of each
// version's time.
func RunStories(ctx context.Context, st FactStore, stories []Story, o StoryOptions) (FactReport, error) {
	if o.K == 0 {
		o.K = 5
	}
	rep := FactReport{Stories: len(stories), StoryOptions: o}
	supersede, k := o.Supersede, o.K
	var stale, current, first, valid, later int
	for _, s := range stories {
		type write struct {
			FactLine
			version bool
		}
		var writes []write
		for _, v := range s.Versions {
			writes = append(writes, write{v, true})
		}
		for _, d := range s.Distractors {
			writes = append(writes, write{d, false})
		}
		slices.SortStableFunc(writes, func(a, b write) int { return a.Time.Compare(b.Time) })
		prev := ""
		for _, w := range writes {
			rec := memory.Record{ID: w.ID, Text: w.Text, Time: w.Time, Namespace: s.ID}
			var err error
			if supersede && w.version && prev != "" {
				_, err = st.Supersede(ctx, prev, rec)
			} else {
				_, err = st.Remember(ctx, rec)
			}
			if err != nil {
				return rep, fmt.Errorf("eval: story %s: %s: %w", s.ID, w.ID, err)
			}
			if w.version {
				prev = w.ID
			}
		}
		ask := func(at time.Time) ([]string, error) {
			hits, err := st.Query(ctx, memory.Query{Text: s.Question, Namespace: s.ID, K: k, AsOf: at, MinRelevance: o.MinRelevance})
			if err != nil {
				return nil, fmt.Errorf("eval: story %s: %w", s.ID, err)
			}
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			return ids, nil
		}
		ids, err := ask(time.Time{})
		if err != nil {
			return rep, err
		}
		rep.Questions++
		last := len(s.Versions) - 1
		superseded := func(id string) bool {
			return slices.ContainsFunc(s.Versions[:last], func(v FactLine) bool { return v.ID == id })
		}
		if at := slices.Index(ids, s.Versions[last].ID); at >= 0 {
			current++
			if !slices.ContainsFunc(ids[:at], superseded) {
				first++
			}
		}
		if slices.ContainsFunc(ids, superseded) {
			stale++
		}
		for v := range last {
			mid := s.Versions[v].Time.Add(s.Versions[v+1].Time.Sub(s.Versions[v].Time) / 2)
			ids, err := ask(mid)
			if err != nil {
				return rep, err
			}
			rep.AsOfQuestions++
			if slices.Contains(ids, s.Versions[v].ID) {
				valid++
			}
			if slices.ContainsFunc(s.Versions[v+1:], func(l FactLine) bool { return slices.Contains(ids, l.ID) }) {
				later++
			}
		}
	}
	share := func(n, of int) float64 {
		if of == 0 {
			return 0
		}
		return float64(n) / float64(of)
	}
	rep.Stale, rep.Current, rep.CurrentFirst = share(stale, rep.Questions), share(current, rep.Questions), share(first, rep.Questions)
	rep.AsOfValid, rep.AsOfLater = share(valid, rep.AsOfQuestions), share(later, rep.AsOfQuestions)
	return rep, nil
}

// String formats the report as one line.
func (r FactReport) String() string {
	how := "plain add"
	if r.Supersede {
		how = "supersede"
	}
	rel := "default"
	if r.MinRelevance != 0 {
		rel = fmt.Sprint(r.MinRelevance)
	}
	return fmt.Sprintf("%-9s  min relevance %-7s  %d stories: now (%d): stale in top %d %5.1f%%, current %5.1f%% (above every stale one %5.1f%%); as of a past moment (%d): valid version %5.1f%%, a later one %5.1f%%",
		how, rel, r.Stories, r.Questions, r.K, 100*r.Stale, 100*r.Current, 100*r.CurrentFirst, r.AsOfQuestions, 100*r.AsOfValid, 100*r.AsOfLater)
}

// Problems returns what a run of the suite got wrong: with supersede, a
// stale version among the hits of a question asked now; in any run, a
// later version among the hits of a question asked as of a past moment;
// with supersede, a current version (or one valid then) not found, below
// all of them when no threshold leaves hits out (MinRelevance < 0) and
// below 85% with the default threshold, which leaves out an answer that
// shares no content word with its question (measured 89–91% with the
// hash embedder).
func (r FactReport) Problems() []string {
	var out []string
	if r.AsOfLater > 0 {
		out = append(out, fmt.Sprintf("%.1f%% of the questions asked as of a past moment found a later version", 100*r.AsOfLater))
	}
	if !r.Supersede {
		return out
	}
	if r.Stale > 0 {
		out = append(out, fmt.Sprintf("%.1f%% of the questions asked now found a superseded version", 100*r.Stale))
	}
	least := 0.85
	if r.MinRelevance < 0 {
		least = 1
	}
	if r.Current < least {
		out = append(out, fmt.Sprintf("the current version was found for %.1f%% of the questions asked now, want ≥ %.0f%%", 100*r.Current, 100*least))
	}
	if r.AsOfValid < least {
		out = append(out, fmt.Sprintf("the version valid then was found for %.1f%% of the questions asked as of a past moment, want ≥ %.0f%%", 100*r.AsOfValid, 100*least))
	}
	return out
}

// StoryRuns are the ways the suite runs: with and without supersede, with
// the default relevance threshold and without one.
var StoryRuns = []StoryOptions{{Supersede: true}, {Supersede: true, MinRelevance: -1}, {}, {MinRelevance: -1}}
