#!/usr/bin/env python3
"""Convert DRCD (Delta Reading Comprehension Dataset) into agentmem eval's format.

DRCD is Traditional Chinese reading comprehension over Wikipedia paragraphs
(github.com/DRCKnowledgeTeam/DRCD, CC BY-SA 3.0). It is a document memory
rather than a conversation: every paragraph is a record, every question asks
about one paragraph, and its evidence is that paragraph.

The data is not committed (CC BY-SA 3.0, 2.2 MB a file); bring it with
`git show b944790:DRCD_dev.json` from a clone of the repository.

Usage: scripts/drcd.py DRCD_dev.json OUTDIR [--per-conv N] [--name PREFIX]

It reads any file in SQuAD's format: a paragraph without an id is named
"<title>-<index>", and a question without answers (SQuAD 2.0's
unanswerable ones) is left out. --name sets the namespaces' prefix
(default "drcd").

Articles are kept whole and grouped in file order into conversations
("namespaces") of about N paragraphs (default 100), so that a question is
asked of a store holding its article among a hundred others' paragraphs.
A paragraph is a turn: id "<article>-<paragraph>" (DRCD's own paragraph id),
speaker "Wikipedia", no date. Questions carry no asked_at: the whole store is
written before any question is asked. Category: the kind of answer
(number, date or span), guessed from the answer's characters.
"""
import json
import os
import re
import sys


def kind(answer):
    if re.fullmatch(r"[\d０-９,.，．%％]+.?", answer):
        return "number"
    if re.search(r"\d+\s*[年月日]|[年月日]$", answer):
        return "date"
    return "span"


def main():
    args = sys.argv[1:]
    per, prefix = 100, "drcd"
    if "--per-conv" in args:
        i = args.index("--per-conv")
        per = int(args[i + 1])
        del args[i : i + 2]
    if "--name" in args:
        i = args.index("--name")
        prefix = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, out = args
    data = json.load(open(src, encoding="utf-8"))["data"]
    convs, cur, n = [], [], 0
    for art in data:
        cur.append(art)
        n += len(art["paragraphs"])
        if n >= per:
            convs.append(cur)
            cur, n = [], 0
    if cur:
        convs.append(cur)
    os.makedirs(out, exist_ok=True)
    nt = nq = 0
    with open(os.path.join(out, "turns.jsonl"), "w", encoding="utf-8") as ft, open(
        os.path.join(out, "questions.jsonl"), "w", encoding="utf-8"
    ) as fq:
        for ci, arts in enumerate(convs, 1):
            conv = "%s-%02d" % (prefix, ci)
            for art in arts:
                for pi, p in enumerate(art["paragraphs"]):
                    pid = p.get("id") or "%s-%d" % (art["title"], pi)
                    ft.write(json.dumps({"conv": conv, "id": pid, "speaker": "Wikipedia", "text": p["context"]}, ensure_ascii=False) + "\n")
                    nt += 1
                    for qa in p["qas"]:
                        if not qa["answers"]:
                            continue
                        ans = qa["answers"][0]["text"]
                        fq.write(json.dumps({"qid": qa["id"], "conv": conv, "question": qa["question"], "answer": ans,
                                             "evidence": [pid], "category": kind(ans)}, ensure_ascii=False) + "\n")
                        nq += 1
    print("%d conversations, %d paragraphs, %d questions" % (len(convs), nt, nq), file=sys.stderr)


if __name__ == "__main__":
    main()
