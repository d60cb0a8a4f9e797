package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalText(t *testing.T) {
	for in, want := range map[string]string{
		"I live in Paris.":            "i live in paris",
		"i live in  paris":            "i live in paris",
		"  \t\"Quoted\" -- (yes)!\n ": "quoted\" -- (yes",
		"Price: $5 + VAT":             "price: $5 + vat",
		"":                            "",
		"...":                         "",
		"ZÜRICH is in Switzerland":    "zürich is in switzerland",
		"ﬁne Ｐａｒｉｓ":                   "fine paris",
		"line\r\nbreaks\vand\ffeeds":  "line breaks and feeds",
	} {
		assert.Equal(t, want, NormalText(in), "%q", in)
		assert.Equal(t, normalText(in), NormalText(in), "%q", in)
	}
}

// The one-pass path for ASCII texts gives what the general one gives.
func FuzzNormalASCII(f *testing.F) {
	for _, s := range []string{"I live in Paris.", " a\t\tb ", "#tag_1 @Bob: ok?", "\x00\x7f~`", "A-Z a-z 0-9 {}[]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := normalASCII(s)
		if !ok {
			return
		}
		if want := normalText(s); got != want {
			t.Fatalf("normalASCII(%q) = %q, normalText %q", s, got, want)
		}
	})
}

// BenchmarkNormalText measures an English turn's key text.
func BenchmarkNormalText(b *testing.B) {
	const turn = "MoDL stands for \"Model Based Deep Learning\" architecture, which is a method used to solve inverse problems. " +
		"Inverse problems involve finding the underlying causes of a given set of measurements or observations."
	b.Run("ascii", func(b *testing.B) {
		for b.Loop() {
			NormalText(turn)
		}
	})
	b.Run("general", func(b *testing.B) {
		for b.Loop() {
			normalText(turn)
		}
	})
}
