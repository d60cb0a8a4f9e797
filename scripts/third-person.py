#!/usr/bin/env python3
"""Asks a chat log's questions about its user in the third person.

Usage: scripts/third-person.py SRC DST

SRC holds turns.jsonl and questions.jsonl (agentmem eval's format) of
conversations between a user who introduces themselves by name ("Hello,
my name is Emily.", "Hi, I'm Gary.", "我叫张曼婷") and an assistant, asked in the first
person ("What painters did you recommend to me?"). DST gets the same turns
and the same questions asked by name ("What painters did you recommend to
Emily?"), as an agent serving several people, or another agent, asks about
one of them: the name is in one turn of the log, and the speaker of the
turns that hold the answers is "User". A conversation whose user never
introduces themselves is left out, and so is a question the rewrite leaves
unchanged (it was not about the user).

The rewrite is word by word: I, me, my, mine and their contractions become
the name ("I'm" → "Emily is", "do I like" → "does Emily like", "I like" →
"Emily likes"), "we"/"us"/"our" become "Emily and you"; in Chinese 我
becomes the name (我的 → 张曼婷的) and 我们 张曼婷和你.
"""
import json
import os
import re
import sys

INTRO = [re.compile(p) for p in (r"\bmy name is ([A-Z][a-z]+(?: [A-Z][a-z]+)?)", r"\bI'm ([A-Z][a-z]+)\b", r"\bI am ([A-Z][a-z]+)\b",
                                  r"(?:我叫|我的名字是|我的名字叫|我是)([\u4e00-\u9fff]{2,4}?)[，。！,.!]")]

# Verbs after "I" in the present tense that take an s after a name.
PRESENT = {"like", "love", "enjoy", "prefer", "want", "need", "think", "feel", "hate", "know", "remember", "plan"}
AUX = {"do": "does", "am": "is", "have": "has", "was": "was", "did": "did", "should": "should", "can": "can",
       "could": "could", "would": "would", "will": "will", "might": "might", "must": "must"}
CONTRACTIONS = {"i'm": "{n} is", "i've": "{n} has", "i'd": "{n} had", "i'll": "{n} will"}


def rewrite_zh(q, name):
    """我们 → NAME和你, 我的 → NAME的, 我 → NAME (咱们 too)."""
    q = q.replace("我们", name + "和你").replace("咱们", name + "和你")
    return q.replace("我", name)


def rewrite(q, name):
    if re.search(r"[\u4e00-\u9fff]", q):
        return rewrite_zh(q, name)
    words = q.split(" ")
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        m = re.match(r"^([\"'(]*)(.*?)([.,?!;:\"')]*)$", w)
        pre, core, post = m.groups()
        low = core.lower()
        nxt = words[i + 1] if i + 1 < len(words) else ""
        nlow = re.sub(r"[^a-z']", "", nxt.lower())
        if low in CONTRACTIONS:
            out.append(pre + CONTRACTIONS[low].format(n=name) + post)
        elif low == "i":
            if nlow in ("am",) and not post:
                out.append(pre + name)
                out.append(nxt.lower().replace("am", "is", 1))
                i += 2
                continue
            if nlow in ("have", "do") and not post:
                out.append(pre + name)
                out.append(nxt.lower().replace(nlow, AUX[nlow], 1))
                i += 2
                continue
            if nlow == "don't" and not post:
                out.append(pre + name)
                out.append(nxt.replace("don't", "doesn't"))
                i += 2
                continue
            if nlow in PRESENT and not post:
                out.append(pre + name)
                out.append(re.sub(r"^([a-z]+)", lambda v: v.group(1) + ("s" if not v.group(1).endswith("s") else ""), nxt))
                i += 2
                continue
            out.append(pre + name + post)
        elif low in ("me", "myself"):
            out.append(pre + name + post)
        elif low in ("my", "mine"):
            out.append(pre + name + "'s" + post)
        elif low in ("we", "us"):
            out.append(pre + name + " and you" + post)
        elif low == "our":
            out.append(pre + name + "'s and your" + post)
        elif low in AUX and nlow == "i" and not post:
            # "do I like" → "does Emily like"
            cap = core[:1].isupper()
            aux = AUX[low]
            out.append(pre + (aux.capitalize() if cap else aux))
            out.append(re.sub(r"^I\b", name, nxt))
            i += 2
            continue
        else:
            out.append(w)
        i += 1
    s = " ".join(out)
    return s[:1].upper() + s[1:]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    turns = [json.loads(l) for l in open(os.path.join(src, "turns.jsonl"))]
    names = {}
    for t in turns:
        if t["conv"] in names or t.get("speaker", "").lower() != "user":
            continue
        for p in INTRO:
            m = p.search(t["text"])
            if m:
                names[t["conv"]] = m.group(1)
                break
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "turns.jsonl"), "w") as f:
        for t in turns:
            if t["conv"] in names:
                f.write(json.dumps(t, ensure_ascii=False) + "\n")
    n = 0
    with open(os.path.join(dst, "questions.jsonl"), "w") as f:
        for l in open(os.path.join(src, "questions.jsonl")):
            q = json.loads(l)
            if q["conv"] not in names:
                continue
            r = rewrite(q["question"], names[q["conv"]])
            if r == q["question"]:
                continue
            q["question"] = r
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
            n += 1
    print(f"{len(names)} conversations, {n} questions asked by name", file=sys.stderr)


if __name__ == "__main__":
    main()
