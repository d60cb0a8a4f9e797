#!/usr/bin/env python3
"""recall-frames.py: a copy of a data set in the common format (shared/data's
README) whose questions are asked the way a user asks a memory to recall:
"Do you remember …", "Can you remind me …", "Tell me, …", "Do you recall …",
"Hey, do you know …" in turn (Chinese questions: 你还记得, 告诉我，, 请提醒我,
你记得, 你知道), the question's first letter lowered after the frame.

With --forgetful the frames are the user's own: "I forgot …", "I can't
remember …", "I don't remember …" (Chinese: 我忘了, 我不记得).

Writes OUT/turns.jsonl (DIR's, copied) and OUT/questions.jsonl (each
question framed; the rest of the line unchanged).

    python3 scripts/recall-frames.py testdata/memorybank /tmp/frames/memorybank
    go run ./cmd/agentmem eval /tmp/frames/memorybank --cross-probes --mode hybrid

A memory that reads the frame as part of the question finds less, and
trusts what it finds less (ranking.WithoutRecallFrame). Python standard
library only; the output is derived, not committed.
"""
import json
import os
import shutil
import sys

FRAMES = ["Do you remember ", "Can you remind me ", "Tell me, ", "Do you recall ", "Hey, do you know "]
CJK_FRAMES = ["你还记得", "告诉我，", "请提醒我", "你记得", "你知道"]
FORGETFUL = ["I forgot ", "I can't remember ", "I don't remember "]
CJK_FORGETFUL = ["我忘了", "我不记得"]


def cjk(text):
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def main():
    args = sys.argv[1:]
    frames, cjk_frames = FRAMES, CJK_FRAMES
    if args[:1] == ["--forgetful"]:
        args, frames, cjk_frames = args[1:], FORGETFUL, CJK_FORGETFUL
    if len(args) != 2:
        sys.exit("usage: recall-frames.py [--forgetful] DIR OUT")
    src, out = args
    os.makedirs(out, exist_ok=True)
    shutil.copyfile(os.path.join(src, "turns.jsonl"), os.path.join(out, "turns.jsonl"))
    with open(os.path.join(src, "questions.jsonl"), encoding="utf-8") as f, \
            open(os.path.join(out, "questions.jsonl"), "w", encoding="utf-8") as w:
        i = 0
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            text = q["question"]
            if cjk(text):
                q["question"] = cjk_frames[i % len(cjk_frames)] + text
            else:
                q["question"] = frames[i % len(frames)] + text[:1].lower() + text[1:]
            i += 1
            w.write(json.dumps(q, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
