#!/usr/bin/env python3
"""no-speakers.py: a copy of a data set in the common format (shared/data's
README) whose turns have no speaker: the shape of a transcript imported
without saying who spoke, whose turns the long-term memory takes for notes
(memory.Record.Speaker empty).

Writes OUT/turns.jsonl (every turn without its "speaker") and
OUT/questions.jsonl (DIR's, unchanged).

    python3 scripts/no-speakers.py testdata/memorybank /tmp/nospk/memorybank
    go run ./cmd/agentmem eval /tmp/nospk/memorybank --mode hybrid

Python standard library only; the output is derived, not committed.
"""
import json
import os
import shutil
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: no-speakers.py DIR OUT")
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(src, "turns.jsonl"), encoding="utf-8") as f, \
            open(os.path.join(out, "turns.jsonl"), "w", encoding="utf-8") as w:
        for line in f:
            if not line.strip():
                continue
            turn = json.loads(line)
            turn.pop("speaker", None)
            w.write(json.dumps(turn, ensure_ascii=False) + "\n")
    shutil.copyfile(os.path.join(src, "questions.jsonl"), os.path.join(out, "questions.jsonl"))


if __name__ == "__main__":
    main()
