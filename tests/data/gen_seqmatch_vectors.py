#!/usr/bin/python3
"""Generates difflib.SequenceMatcher test vectors for writer/speaker_levenshtein.

Each line: JSON {"a": str, "b": str, "ratio": float} computed with
SequenceMatcher(None, a, b).ratio() (autojunk on, the default). Includes
strings of 200+ characters with frequent characters, so the autojunk
heuristic matters, and CJK text. Deterministic (seeded).

    /usr/bin/python3 tests/data/gen_seqmatch_vectors.py > tests/data/seqmatch_vectors.jsonl
"""
import difflib
import json
import random

rng = random.Random(20261129)
words = ["alice", "bob", "prefers", "the", "beach", "offsite", "moves", "to", "porto",
         "budget", "checkpoint", "3", "tracks", "night", "train", "group", "decided",
         "a", "an", "is", "of", "and", "quote", "signed", "team", "needs"]
cjk = "我喜欢茶他们决定去波尔图"


def sentence(n):
    return " ".join(rng.choice(words) for _ in range(n))


cases = [("", ""), ("abc", ""), ("", "abc"), ("abcd", "bcde"),
         ("alice prefers the beach", "alice prefers the mountains"),
         ("我 喜 欢 茶", "我 喜 欢 咖 啡")]
for _ in range(60):
    cases.append((sentence(rng.randint(1, 12)), sentence(rng.randint(1, 12))))
for _ in range(30):
    a = sentence(rng.randint(40, 90))
    b = sentence(rng.randint(40, 90))
    cases.append((a, b))
for _ in range(10):
    a = " ".join(rng.choice(cjk) for _ in range(rng.randint(5, 120)))
    b = " ".join(rng.choice(cjk) for _ in range(rng.randint(5, 120)))
    cases.append((a, b))
for _ in range(10):
    b = "".join(rng.choice("aab ") for _ in range(rng.randint(200, 400)))
    a = "".join(rng.choice("abc ") for _ in range(rng.randint(50, 300)))
    cases.append((a, b))
for a, b in cases:
    print(json.dumps({"a": a, "b": b,
                      "ratio": difflib.SequenceMatcher(None, a, b).ratio()},
                     ensure_ascii=False))
