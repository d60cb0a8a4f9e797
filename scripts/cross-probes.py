#!/usr/bin/env python3
"""cross-probes.py: probes for the relevance threshold, from a data set in
the common format (shared/data's README).

Writes OUT: every question of DIR/questions.jsonl, then each question again
as a probe asked in another conversation (the next one in file order, the
last's in the first): same text, "evidence": [] (the right answer is
nothing: that conversation never held what the question asks about),
"category": "probe", and "asked_at" the turn at the same share of the other
conversation as the question's own asked_at is of its conversation.

    python3 scripts/cross-probes.py ../shared/data/realmem /tmp/realmem-probes.jsonl
    go run ./cmd/agentmem eval --turns ../shared/data/realmem/turns.jsonl \\
        --questions /tmp/realmem-probes.jsonl --sweep-relevance

Python standard library only; the output is derived, not committed.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: cross-probes.py DIR OUT.jsonl")
    src, out = sys.argv[1], sys.argv[2]
    turns = {}
    for line in open(os.path.join(src, "turns.jsonl"), encoding="utf-8"):
        if line.strip():
            t = json.loads(line)
            turns.setdefault(t["conv"], []).append(str(t["id"]).strip())
    convs = list(turns)
    nxt = {c: convs[(i + 1) % len(convs)] for i, c in enumerate(convs)}
    qs = [json.loads(l) for l in open(os.path.join(src, "questions.jsonl"), encoding="utf-8") if l.strip()]
    with open(out, "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
        for q in qs:
            own, other = turns[q["conv"]], turns[nxt[q["conv"]]]
            share = 1.0
            if q.get("asked_at") in own:
                share = own.index(q["asked_at"]) / len(own)
            p = {"qid": "probe:" + q["qid"] + "@" + nxt[q["conv"]], "conv": nxt[q["conv"]],
                 "question": q["question"], "evidence": [], "category": "probe"}
            at = max(int(share * len(other)), 1)
            if at < len(other):
                p["asked_at"] = other[at]
            f.write(json.dumps(p, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
