#!/usr/bin/env python3
"""small-stores.py: small memories built from a data set in the common
format (shared/data's README), the shape of an agent's first days: a few
notes, each about something else, and a question about one of them.

For each question with evidence, OUT holds a store ("conversation") of
its evidence turns and SIZE turns of other conversations (distractors,
drawn with a fixed seed, in random order, all on the evidence's date),
and a second store of SIZE + len(evidence) other distractors where the
question comes again as a probe (evidence [], category "probe": nothing
stored answers it). Turns keep no speaker unless --speakers: notes, as
`agentmem add` writes them. A question is asked with everything stored
(no asked_at).

What to read in `agentmem eval OUT`: R@1 (the note asked about comes
first), hits and prec (what an agent pastes: ideally the one note), and
the false-surface rate (a probe's store should answer nothing).

    python3 scripts/small-stores.py testdata/memorybank /tmp/small/memorybank
    go run ./cmd/agentmem eval /tmp/small/memorybank

Python standard library only; the output is derived, not committed.
"""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=7, help="distractors per store")
    ap.add_argument("--speakers", action="store_true", help="keep the turns' speakers")
    ap.add_argument("--max-chars", type=int, default=400, help="longest distractor turn")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    turns, by_conv = {}, {}
    for line in open(os.path.join(a.src, "turns.jsonl"), encoding="utf-8"):
        if line.strip():
            t = json.loads(line)
            turns[(t["conv"], str(t["id"]).strip())] = t
            by_conv.setdefault(t["conv"], []).append(t)
    qs = [json.loads(l) for l in open(os.path.join(a.src, "questions.jsonl"), encoding="utf-8") if l.strip()]
    pool = [t for t in turns.values() if 0 < len(t["text"]) <= a.max_chars]

    def distractors(conv, n):
        out = []
        while len(out) < n:
            t = rng.choice(pool)
            if t["conv"] != conv and t not in out:
                out.append(t)
        return out

    def turn(conv, i, t, date):
        r = {"conv": conv, "session": 1, "date": date, "id": "T%d" % i, "text": t["text"]}
        if a.speakers and t.get("speaker"):
            r["speaker"] = t["speaker"]
        return r

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "turns.jsonl"), "w", encoding="utf-8") as tw, \
            open(os.path.join(a.out, "questions.jsonl"), "w", encoding="utf-8") as qw:
        for q in qs:
            ev = [turns.get((q["conv"], str(e).strip())) for e in q.get("evidence") or []]
            if not ev or None in ev:
                continue
            date = ev[0]["date"]
            conv = "small:" + q["qid"]
            items = [(t, True) for t in ev] + [(t, False) for t in distractors(q["conv"], a.size)]
            rng.shuffle(items)
            evidence = []
            for i, (t, is_ev) in enumerate(items, 1):
                tw.write(json.dumps(turn(conv, i, t, date), ensure_ascii=False) + "\n")
                if is_ev:
                    evidence.append("T%d" % i)
            qw.write(json.dumps({"qid": conv, "conv": conv, "question": q["question"], "evidence": evidence,
                                 "category": q.get("category", "")}, ensure_ascii=False) + "\n")
            probe = "small-probe:" + q["qid"]
            for i, t in enumerate(distractors(q["conv"], a.size + len(ev)), 1):
                tw.write(json.dumps(turn(probe, i, t, date), ensure_ascii=False) + "\n")
            qw.write(json.dumps({"qid": probe, "conv": probe, "question": q["question"], "evidence": [],
                                 "category": "probe"}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
