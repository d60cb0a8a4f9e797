#!/usr/bin/env python3
"""calibration-pool.py: the data the relevance model is fitted on.

Writes OUT/turns.jsonl and OUT/questions.jsonl: the development sets below
merged into one (each conversation's name prefixed with its set's, so that
no two collide), every question followed by its cross-conversation probe
(scripts/cross-probes.py). Then:

    python3 scripts/calibration-pool.py /tmp/pool
    go run ./cmd/agentmem eval /tmp/pool --calibrate

prints the coefficients of package engine's calibrations table.

With --drcd DRCD_test.json (DRCD's test file, not committed: see
scripts/drcd.py), its paragraphs are added three times, grouped in
namespaces of about 25, 100 and 400 paragraphs: the Chinese questions of a
store of passages, on which memory/engine's documentCalibrations are
fitted (eval.Fit fits them apart: Sample.Documents). DRCD's development
file is left out: it checks the documents' models on paragraphs they were
not fitted on.

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


DRCD_SIZES = (25, 100, 400)


def main():
    args = sys.argv[1:]
    drcd = None
    if len(args) == 3 and args[1] == "--drcd":
        drcd = args[2]
        args = args[:1]
    if len(args) != 1:
        sys.exit("usage: calibration-pool.py OUT [--drcd DRCD_test.json]")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    sets = dict(SETS)
    if drcd:
        for n in DRCD_SIZES:
            d = os.path.join(out, "drcd%d" % n)
            subprocess.run([sys.executable, os.path.join(HERE, "drcd.py"), drcd, d, "--per-conv", str(n)],
                           check=True, stdout=subprocess.DEVNULL)
            sets["d%d" % n] = d
    with open(os.path.join(out, "turns.jsonl"), "w", encoding="utf-8") as tf, \
            open(os.path.join(out, "questions.jsonl"), "w", encoding="utf-8") as qf:
        for name, d in sets.items():
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
    if drcd:
        for n in DRCD_SIZES:
            d = os.path.join(out, "drcd%d" % n)
            for f in ("turns.jsonl", "questions.jsonl"):
                os.remove(os.path.join(d, f))
            os.rmdir(d)


if __name__ == "__main__":
    main()
