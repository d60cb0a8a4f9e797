#!/usr/bin/env python3
"""calibration-pool.py: the data the relevance model is fitted on.

Writes OUT/turns.jsonl and OUT/questions.jsonl: the development sets below
merged into one (each conversation's name prefixed with its set's, so that
no two collide), every question followed by its cross-conversation probe
(scripts/cross-probes.py). Then:

    python3 scripts/calibration-pool.py /tmp/pool
    go run ./cmd/agentmem eval /tmp/pool --calibrate

prints the coefficients of package engine's calibrations table.

DRCD (scripts/drcd.py), a set of documents rather than conversations, is
left out on purpose: it checks the fitted models on stores they were not
fitted on.

Python standard library only; the output is derived, not committed.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SETS = {
    "rm": os.path.join(ROOT, "..", "shared", "data", "realmem"),
    "bd": os.path.join(ROOT, "testdata", "eval"),
    "mb": os.path.join(ROOT, "testdata", "memorybank"),
    "mz": os.path.join(ROOT, "testdata", "memorybank", "zh"),
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: calibration-pool.py OUT")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "turns.jsonl"), "w", encoding="utf-8") as tf, \
            open(os.path.join(out, "questions.jsonl"), "w", encoding="utf-8") as qf:
        for name, d in SETS.items():
            if not os.path.exists(os.path.join(d, "turns.jsonl")):
                sys.exit("calibration-pool.py: no data set in " + d)
            for line in open(os.path.join(d, "turns.jsonl"), encoding="utf-8"):
                if line.strip():
                    t = json.loads(line)
                    t["conv"] = name + ":" + t["conv"]
                    tf.write(json.dumps(t, ensure_ascii=False) + "\n")
            probes = os.path.join(out, name + "-probes.jsonl")
            subprocess.run([sys.executable, os.path.join(HERE, "cross-probes.py"), d, probes], check=True)
            for line in open(probes, encoding="utf-8"):
                q = json.loads(line)
                q["conv"] = name + ":" + q["conv"]
                q["qid"] = name + ":" + q["qid"]
                qf.write(json.dumps(q, ensure_ascii=False) + "\n")
            os.remove(probes)


if __name__ == "__main__":
    main()
