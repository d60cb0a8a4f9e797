package postgres

import (
	"errors"
	"slices"
	"testing"
)

// FuzzDecodeBlock: decodeBlock reads a posting block as PostgreSQL hands
// it back (posting_blocks.data), damaged or not. It never panics, and it
// returns errBadBlock or postings as writes make them (seqs ascending from
// 1, tf and dl not negative, each episode from 1 to its record's seq) that
// encode back to the same postings. It needs no database.
func FuzzDecodeBlock(f *testing.F) {
	// Blocks as writes pack them: seqs ascending from 1, each record's
	// episode the seq of its conversation's first record.
	for _, ps := range [][]posting{
		nil,
		{{seq: 1, episode: 1, tf: 1, dl: 9}},
		{{seq: 2, episode: 1, tf: 3, dl: 41}, {seq: 3, episode: 1, tf: 1, dl: 7}, {seq: 9, episode: 9, tf: 2, dl: 12}, {seq: 300, episode: 280, tf: 1, dl: 1 << 20}},
		blockOf(1024),
	} {
		f.Add(encodeBlock(ps))
	}
	f.Add([]byte{0x80})                                                                      // a uvarint cut short
	f.Add([]byte{1, 1, 1})                                                                   // a posting cut short
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 1, 0}) // a uvarint past 64 bits
	// Values that fit a uvarint but no posting, which decodeBlock took
	// before: a tf past int32 (negative once converted), a seq that does
	// not ascend, one past int64, an episode before the first record.
	f.Add([]byte{1, 0x80, 0x80, 0x80, 0x80, 0x08, 1, 0})
	f.Add([]byte{1, 1, 1, 0, 0, 1, 1, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 1, 0, 1, 1, 1, 0})
	f.Add([]byte{2, 1, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		prefix := []posting{{seq: 7, episode: 7, tf: 1, dl: 1}}
		ps, err := decodeBlock(slices.Clone(prefix), data)
		if err != nil {
			if !errors.Is(err, errBadBlock) {
				t.Fatalf("error %v is not errBadBlock", err)
			}
			return
		}
		if !slices.Equal(ps[:1], prefix) {
			t.Fatalf("decodeBlock changed what it appends to: %v", ps[:1])
		}
		ps = ps[1:]
		var prev int64
		for _, p := range ps {
			if p.seq <= prev || p.tf < 0 || p.dl < 0 || p.episode < 1 || p.episode > p.seq {
				t.Fatalf("decoded a posting no write makes: %+v after seq %d", p, prev)
			}
			prev = p.seq
		}
		again, err := decodeBlock(nil, encodeBlock(ps))
		if err != nil {
			t.Fatalf("re-encoded postings do not decode: %v", err)
		}
		if !slices.Equal(again, ps) {
			t.Fatalf("postings change when encoded again:\n%v\n%v", ps, again)
		}
	})
}

// blockOf returns a full block of n postings of one term: every third
// record, conversations of five records.
func blockOf(n int) []posting {
	ps := make([]posting, n)
	for i := range ps {
		seq := int64(3*i + 1)
		ps[i] = posting{seq: seq, episode: seq - (seq-1)%5, tf: int32(1 + i%4), dl: int32(10 + i%300)}
	}
	return ps
}

// encodeBlock is ps packed as a block (appendBlock), on its own.
func encodeBlock(ps []posting) []byte { return appendBlock(nil, ps) }
