package chunk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adversarial returns texts built to make a splitter revisit runes: one
// endless sentence, text without any space or stop, CJK without stops,
// combining marks without a base, dotted CJK that looks like initials,
// tiny pieces to merge, long white space, and prose.
func adversarial(size int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1)[:size] }
	return map[string]string{
		"run-on":         fill("level=info msg=request path=/api/v1/orders status=200 dur=3ms "),
		"no space":       fill("x"),
		"cjk no stop":    fill("这是一个很长的句子没有句号也没有逗号"),
		"marks":          "a" + fill("\u0301"),
		"dotted cjk":     fill("中."),
		"dotted latin":   fill("a.b"),
		"tiny pieces":    fill("a. "),
		"white space":    "start " + fill(" \t") + " end.",
		"list numbers":   fill("1. "),
		"commas":         fill(",,,,"),
		"prose":          fill("We rolled back, e.g. to v1.2.2! 我们决定迁移到PostgreSQL。原因是事务支持更好，运维也更熟悉！\n"),
		"prose one line": fill("We rolled back, e.g. to v1.2.2! 我们决定迁移到PostgreSQL。原因是事务支持更好，运维也更熟悉！ "),
		"mixed lengths":  fill("short. " + strings.Repeat("long ", 60) + "\n"),
	}
}

// TestSplit_LinearWork counts the runes every loop of the splitter visits
// (splitter.work) on inputs built to make a quadratic splitter revisit
// text: the work per byte stays under a small constant, and 16 times the
// input costs 16 times the work. The old splitter recounted the rest of a
// long sentence at every cut: about len/200 visits per rune, 5,000 per rune
// for 1 MiB of run-on text.
func TestSplit_LinearWork(t *testing.T) {
	t.Parallel()

	small, large := adversarial(8<<10), adversarial(128<<10)
	for name, text := range large {
		t.Run(name, func(t *testing.T) {
			for _, opts := range []*Options{nil, {MinRunes: 1, MaxRunes: 7}, {MinRunes: 40, MaxRunes: 64}} {
				s := newSplitter(nil, text, opts)
				got := s.split()
				require.NotEmpty(t, got)
				perByte := float64(s.work) / float64(len(text))
				t.Logf("opts %+v: %.2f runes visited per byte", opts, perByte)
				assert.Less(t, perByte, 8.0, "runes visited per byte of text, opts %+v", opts)

				s0 := newSplitter(nil, small[name], opts)
				s0.split()
				ratio := float64(s.work) / float64(s0.work)
				assert.InDelta(t, 16, ratio, 1.6, "work(128 KiB)/work(8 KiB), opts %+v", opts)
			}
		})
	}
}
