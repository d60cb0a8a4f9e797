#!/usr/bin/env python3
"""Make a lookup probe from a retrieval data set in the common format.

Each question is one sentence (8 to 30 words) of a turn of the set, with
about 30% of its words dropped at random; its evidence is that turn. It
asks what a reading-comprehension set asks (a question whose words nearly
all stand in one turn), on the dev set's own text: a ranking that adds
context (neighbours, conversations, speakers) must not lose such a turn
to the turns around it. Plain BM25 finds most of them first.

Usage:
  python3 scripts/lookup-probe.py ../shared/data/realmem /tmp/probe [--n 1000] [--seed 3]
  go run ./cmd/agentmem eval /tmp/probe

Standard library only; the same arguments give the same probe.
"""
import argparse
import json
import os
import random
import re


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="folder with turns.jsonl")
    ap.add_argument("dst", help="folder to write turns.jsonl and questions.jsonl to")
    ap.add_argument("--n", type=int, default=1000, help="turns to ask about")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(os.path.join(args.src, "turns.jsonl"), encoding="utf-8") as f:
        turns = [json.loads(line) for line in f if line.strip()]
    os.makedirs(args.dst, exist_ok=True)
    with open(os.path.join(args.dst, "turns.jsonl"), "w", encoding="utf-8") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    long_enough = [t for t in turns if len(t["text"].split()) >= 12]
    questions = []
    for i, t in enumerate(rng.sample(long_enough, min(args.n, len(long_enough)))):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", t["text"]) if 8 <= len(s.split()) <= 30]
        if not sentences:
            continue
        words = [w for w in rng.choice(sentences).split() if rng.random() > 0.3]
        questions.append({"qid": "p%d" % i, "conv": t["conv"], "question": " ".join(words),
                          "evidence": [t["id"]], "category": t.get("speaker") or "?"})
    with open(os.path.join(args.dst, "questions.jsonl"), "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print("%d turns, %d questions in %s" % (len(turns), len(questions), args.dst))


if __name__ == "__main__":
    main()
