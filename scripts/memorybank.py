#!/usr/bin/env python3
"""Make the MemoryBank dev set (common format) from MemoryBank-SiliconFriend.

The source (github.com/zhongwanjun/MemoryBank-SiliconFriend, MIT) holds 15
simulated users' chats with an AI companion, one session a day from
2023-04-27 to 2023-05-06, and 100 probing questions the users ask after
the last day, without answers or evidence. The evidence turns and each
question's kind come from labels.tsv beside the data (hand-labelled for
this project, one line a question: user, index, evidence ids, category,
note).

Protocol (asked_at): after the last day each user opens one more session,
dated the next day (2023-05-07), in which they ask their questions in the
source's order, one User turn each; a question's asked_at is its own turn,
so only the history and the user's earlier questions are in memory when it
is asked, as in RealMem. --isolate gives every question a conversation of
its own (the user's history and that question only), so that no earlier
question is in memory.

Kinds (the four of issue 28, where the labels allow; a question may have
several, `kinds`): "time" (the question names a day or a relative time),
"speaker" (every evidence turn is the assistant's: the user asks what
"you" said), "multi-hop" (evidence in two or more sessions). `category` is
the first of multi-hop, time, speaker that applies, else "other".

Usage:
  GITDIR=$(the git dir that `fetch github:zhongwanjun/MemoryBank-SiliconFriend` returns)
  mkdir -p /tmp/mb/raw && for f in memory_bank_en.json probing_questions_en.jsonl; do
    git --git-dir=$GITDIR show cf61c4196e4cfdb0f2b7a0316249fa40312dc3a9:eval_data/en/$f > /tmp/mb/raw/$f; done
  python3 scripts/memorybank.py /tmp/mb/raw testdata/memorybank [--isolate]
  go run ./cmd/agentmem eval testdata/memorybank

The Chinese originals (eval_data/cn/memory_bank_cn.json and
probing_questions_cn.jsonl, of which the English files are a translation:
same users, days, exchanges and questions, in the same order) give the
Chinese set with --lang zh and labels-zh.tsv:
  python3 scripts/memorybank.py --lang zh /tmp/mb/raw testdata/memorybank/zh
  go run ./cmd/agentmem eval --bm25-tokenizer bigram testdata/memorybank/zh

Standard library only; the same input gives the same output.
"""
import argparse
import json
import os
import re
from datetime import date, timedelta

KINDS = ("multi-hop", "time", "speaker")
DATE_WORDS = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|"
    r"november|december)\s+\d|\b(yesterday|today|last (week|night|month)|"
    r"days? ago|first conversation)\b",
    re.I,
)
DATE_WORDS_ZH = re.compile(r"\d+月\d+[日号]|昨天|今天|前几天|上周|第一次")
SOURCES = {
    "en": ("memory_bank_en.json", "probing_questions_en.jsonl", "labels.tsv", DATE_WORDS),
    "zh": ("memory_bank_cn.json", "probing_questions_cn.jsonl", "labels-zh.tsv", DATE_WORDS_ZH),
}


def load_labels(path):
    """Reads labels.tsv: {(user, index): (evidence, category, note)}."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 4:
                raise SystemExit(f"{path}:{n}: want user, index, evidence, category[, note]")
            user, idx, ev, cat = parts[:4]
            note = parts[4] if len(parts) > 4 else ""
            evidence = [e.strip() for e in ev.split(",") if e.strip()]
            out[(user, int(idx))] = (evidence, cat, note)
    return out


def history(user):
    """Yields (session, date, id, speaker, text) for a user's chats."""
    for s, (day, pairs) in enumerate(sorted(user["history"].items()), 1):
        t = 0
        for p in pairs:
            for speaker, text in (("User", p["query"]), ("Assistant", p["response"])):
                t += 1
                yield s, day, f"S{s}:{t}", speaker, text.strip()


def clean_question(q):
    """Strips the stray quotes some source questions carry."""
    q = q.strip()
    if len(q) > 1 and q[0] == '"' and q[-1] == '"':
        q = q[1:-1].strip()
    return q


def kinds_of(question, evidence, category, speakers, date_words):
    """The issue's kinds a labelled question has."""
    ks = []
    if len({e.split(":")[0] for e in evidence}) > 1:
        ks.append("multi-hop")
    if category == "time" or date_words.search(question):
        ks.append("time")
    if evidence and all(speakers[e] == "Assistant" for e in evidence):
        ks.append("speaker")
    return ks


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="folder with memory_bank_en.json and probing_questions_en.jsonl (or the _cn files)")
    ap.add_argument("dst", help="folder to write turns.jsonl and questions.jsonl to")
    ap.add_argument("--lang", choices=sorted(SOURCES), default="en",
                    help="en: the English files; zh: the Chinese originals (eval_data/cn)")
    ap.add_argument("--labels", help="default: testdata/memorybank/labels.tsv (zh: labels-zh.tsv)")
    ap.add_argument("--isolate", action="store_true", help="one conversation per question")
    args = ap.parse_args()
    bank_file, probe_file, label_file, date_words = SOURCES[args.lang]
    if not args.labels:
        args.labels = os.path.join(here, "..", "testdata", "memorybank", label_file)

    with open(os.path.join(args.src, bank_file), encoding="utf-8") as f:
        bank = json.load(f)
    probes = {}
    with open(os.path.join(args.src, probe_file), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                for name, qs in json.loads(line).items():
                    probes[name.strip()] = qs
    labels = load_labels(args.labels)

    turns, questions = [], []
    used = set()
    for raw_name, user in bank.items():
        name = raw_name.strip()
        hist = list(history(user))
        speakers = {tid: sp for _, _, tid, sp, _ in hist}
        last = max(day for _, day, _, _, _ in hist)
        ask_day = (date.fromisoformat(last) + timedelta(days=1)).isoformat()
        ask_session = max(s for s, _, _, _, _ in hist) + 1
        qs = probes.get(name, [])

        def emit(conv, extra):
            for s, day, tid, sp, text in hist:
                turns.append({"conv": conv, "session": s, "date": day, "id": tid, "speaker": sp, "text": text})
            for k, q in extra:
                turns.append({"conv": conv, "session": ask_session, "date": ask_day,
                              "id": f"S{ask_session}:{k + 1}", "speaker": "User", "text": q})

        asked = [(k, clean_question(q)) for k, q in enumerate(qs)]
        if not args.isolate:
            emit(name, asked)
        for k, q in asked:
            if (name, k) not in labels:
                raise SystemExit(f"no label for {name} question {k}: {q}")
            used.add((name, k))
            evidence, cat, note = labels[(name, k)]
            for e in evidence:
                if e not in speakers:
                    raise SystemExit(f"{name} question {k}: no turn {e}")
            conv = name
            if args.isolate:
                conv = f"{name}#q{k}"
                emit(conv, [(k, q)])
            questions.append({
                "qid": f"{name}/q{k}", "conv": conv, "question": q, "answer": "",
                "evidence": evidence, "category": cat,
                "kinds": kinds_of(q, evidence, cat, speakers, date_words),
                "asked_at": f"S{ask_session}:{k + 1}", "note": note,
            })
    extra = set(labels) - used
    if extra:
        raise SystemExit(f"labels for unknown questions: {sorted(extra)}")

    os.makedirs(args.dst, exist_ok=True)
    for fname, rows in (("turns.jsonl", turns), ("questions.jsonl", questions)):
        with open(os.path.join(args.dst, fname), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    convs = {t["conv"] for t in turns}
    with_ev = [q for q in questions if q["evidence"]]
    cats = {}
    for q in with_ev:
        cats[q["category"]] = cats.get(q["category"], 0) + 1
    kinds = {k: sum(k in q["kinds"] for q in with_ev) for k in KINDS}
    print(f"{len(convs)} conversations, {len(turns)} turns, {len(questions)} questions "
          f"({len(with_ev)} with evidence); categories {dict(sorted(cats.items()))}; kinds {kinds}")


if __name__ == "__main__":
    main()
