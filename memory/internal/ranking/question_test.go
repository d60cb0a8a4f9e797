package ranking_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/memory/internal/ranking"
)

func TestWithoutQuestionWords(t *testing.T) {
	for in, want := range map[string]string{
		"What is RP-20931?":            "is RP-20931? ",
		"When did we first see E1234?": "we first see E1234? ",
		"Who's booked on LH401":        "booked on LH401 ",
		"WHERE, exactly?":              "exactly? ",
		"v2.4.1 什么时候上线？":               "v2.4.1  上线？ ",
		"HT-2024-0356 是哪家的合同？":         "HT-2024-0356 是 家的合同？ ",
		"What?":                        "What?", // nothing else: kept as asked
		"how":                          "how",
		"":                             "",
	} {
		assert.Equal(t, want, ranking.WithoutQuestionWords(in), in)
	}
}
