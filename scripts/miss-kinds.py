#!/usr/bin/env python3
"""Sort a retrieval mode's misses into the kinds of issue 28.

Reads a data set in the common format and the report of
`agentmem eval --json` on it, takes one mode's top hits per question, and
tags every missed question with the kinds that fit it (a miss may have
several):

  multi-hop   its evidence lies in two or more sessions
  neighbour   a missed evidence turn is within 2 turns (same conversation,
              same session) of one of the top 3 hits
  speaker     the top hit was said by a speaker who said none of the
              evidence
  time        the question holds a time expression and the top hit was
              said on a day none of the evidence was
  no-word     a missed evidence turn shares no content word with the
              question
  question    the top hit is another question's own turn (its asked_at):
              an earlier question outranks the evidence

A question is missed at k when some evidence turn is not in its top k
(--k 10) or, with --k 1, when its top hit is not evidence. --where also
says where the missed evidence turns are: their rank (the report's top
lists are as long as its largest --k: `agentmem eval --k 1,5,10,100`),
whether the first turn of their session, whether their session holds one
of the top k hits, and how many top k hits are in the question's own
session (its asked_at turn's, which holds no evidence in RealMem). --sample N
prints N missed questions (seeded) with their evidence and top 3 hits, to
be read.

Usage:
  go run ./cmd/agentmem eval --json DIR > /tmp/r.json
  python3 scripts/miss-kinds.py DIR /tmp/r.json [--mode hybrid] [--k 10] [--where] [--sample 30]

Standard library only.
"""
import argparse
import json
import os
import random
import re

STOP = set("""a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in into is
it its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them themselves
then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves ever once before
remember tell told said say mentioned recommended recommend shared share talked talk like liked
did do any anything something some things thing what which me us""".split())
TIME = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\s*\d|\b\d{4}-\d{2}-\d{2}\b|"
    r"\b(yesterday|today|tonight|tomorrow|last (week|night|month|year|weekend|time)|"
    r"(days?|weeks?|months?|years?) (ago|before|after|earlier|later)|first (conversation|time|chat)|"
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b|"
    r"\d+月\d+[日号]|昨天|前几天|上周|第一次",
    re.I,
)
CJK = re.compile(r"[\u4e00-\u9fff]+")


def words(text):
    """Content words, lower case, with a crude plural/-ed/-ing strip; the
    character bigrams of Chinese text."""
    out = set()
    for run in CJK.findall(text):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        w = w.strip("'")
        if len(w) < 3 or w in STOP:
            continue
        for suf in ("ing", "ed", "es", "s"):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                w = w[: -len(suf)]
                break
        out.add(w)
    return out


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def session_of(turn):
    return str(turn.get("session", turn["id"].split(":")[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="folder with turns.jsonl and questions.jsonl")
    ap.add_argument("report", help="agentmem eval --json output on the same folder")
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--where", action="store_true", help="where the missed evidence turns are")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args()

    turns = {}
    order = {}
    for t in read_jsonl(os.path.join(args.dir, "turns.jsonl")):
        key = (t["conv"], t["id"])
        order[key] = len(order)
        turns[key] = t
    qs = {q["qid"]: q for q in read_jsonl(os.path.join(args.dir, "questions.jsonl"))}
    with open(args.report, encoding="utf-8") as f:
        rep = json.load(f)

    kinds = ("multi-hop", "neighbour", "speaker", "time", "no-word", "question")
    asked = {(q["conv"], q.get("asked_at")) for q in qs.values() if q.get("asked_at")}
    count = {k: 0 for k in kinds}
    missed_ev = no_word_ev = 0
    misses = []
    n = 0
    for pq in rep["per_question"]:
        q = qs[pq["qid"]]
        ev = q["evidence"]
        if not ev:
            continue
        n += 1
        top = pq["top"].get(args.mode) or []
        conv = q["conv"]
        if args.k == 1:
            missed = [] if top and top[0] in ev else list(ev)
        else:
            missed = [e for e in ev if e not in top[: args.k]]
        if not missed:
            continue
        tags = []
        if len({session_of(turns[(conv, e)]) for e in ev}) > 1:
            tags.append("multi-hop")
        near = False
        for h in top[:3]:
            hk = (conv, h)
            if hk not in turns:
                continue
            for e in missed:
                ek = (conv, e)
                if session_of(turns[hk]) == session_of(turns[ek]) and 0 < abs(order[hk] - order[ek]) <= 2:
                    near = True
        if near:
            tags.append("neighbour")
        first = turns.get((conv, top[0])) if top else None
        if first is not None and first["speaker"] not in {turns[(conv, e)]["speaker"] for e in ev}:
            tags.append("speaker")
        if TIME.search(q["question"]) and first is not None and first.get("date") not in {
            turns[(conv, e)].get("date") for e in ev
        }:
            tags.append("time")
        qw = words(q["question"])
        nw = [e for e in missed if not (words(turns[(conv, e)]["text"]) & qw)]
        missed_ev += len(missed)
        no_word_ev += len(nw)
        if nw:
            tags.append("no-word")
        if top and (conv, top[0]) in asked:
            tags.append("question")
        for t in tags:
            count[t] += 1
        misses.append((q, top, missed, tags))

    m = len(misses)
    print(f"{args.mode} @ {args.k}: {m} of {n} questions missed")
    for k in kinds:
        print(f"  {k:10s} {count[k]:4d}  ({count[k] / max(m, 1):.0%} of misses)")
    print(f"  missed evidence turns sharing no content word with the question: {no_word_ev} of {missed_ev}"
          f" ({no_word_ev / max(missed_ev, 1):.0%})")
    print(f"  misses with none of these kinds: {sum(1 for x in misses if not x[3])}")
    if args.where:
        where(args, turns, misses)
    if args.sample:
        rng = random.Random(args.seed)
        for q, top, missed, tags in rng.sample(misses, min(args.sample, m)):
            conv = q["conv"]
            print(f"\n## {q['qid']} [{q.get('category')}] tags={','.join(tags) or '-'}")
            print(f"Q: {q['question'][:300]}")
            for e in q["evidence"]:
                t = turns[(conv, e)]
                mark = "MISSED " if e in missed else ""
                print(f"  {mark}EV {e} {t['speaker']} {t.get('date')}: {t['text'][:220]}")
            for r, h in enumerate(top[:3], 1):
                t = turns.get((conv, h))
                if t:
                    print(f"  #{r} {h} {t['speaker']} {t.get('date')}: {t['text'][:220]}")


def where(args, turns, misses):
    """Prints where the missed evidence turns are (--where)."""
    firsts = {}  # (conv, session) -> its first turn's id, in file order
    for key, t in turns.items():
        firsts.setdefault((key[0], session_of(t)), key[1])
    near = f"{args.k + 1}-30"  # a missed turn ranks below k
    ranks = {near: 0, "31-100": 0, "below the list": 0}
    opener = in_hit_session = ev_n = 0
    own = slots = 0
    depth = 0
    for q, top, missed, _ in misses:
        conv = q["conv"]
        depth = max(depth, len(top))
        hit_sessions = {session_of(turns[(conv, h)]) for h in top[: args.k] if (conv, h) in turns}
        for e in missed:
            ev_n += 1
            r = top.index(e) + 1 if e in top else None
            ranks["below the list" if r is None or r > 100 else near if r <= 30 else "31-100"] += 1
            s = session_of(turns[(conv, e)])
            opener += firsts[(conv, s)] == e
            in_hit_session += s in hit_sessions
        if q.get("asked_at") and (conv, q["asked_at"]) in turns:
            mine = session_of(turns[(conv, q["asked_at"])])
            slots += len(top[: args.k])
            own += sum(1 for h in top[: args.k] if (conv, h) in turns and session_of(turns[(conv, h)]) == mine)
    print(f"  missed evidence turns: {ev_n} (lists {depth} deep); by rank: "
          + ", ".join(f"{k} {v}" for k, v in ranks.items()))
    print(f"    first turn of their session: {opener} ({opener / max(ev_n, 1):.0%});"
          f" in the session of a top {args.k} hit: {in_hit_session} ({in_hit_session / max(ev_n, 1):.0%})")
    if slots:
        print(f"  top {args.k} hits of missed questions in the question's own session: {own} of {slots} ({own / slots:.0%})")


if __name__ == "__main__":
    main()
