"""Seeded fuzzing of the commands that read IR: a few hundred mutations of real compiler output
(truncations, deleted, duplicated and swapped lines, undefined names, garbage bytes). Every one
must end with exit 0 (still valid IR) or 2 (an error at file:line:col), never an exception."""
from __future__ import annotations

import random

import pytest

from irlab.cli import main

SEEDS = range(300)
SOURCES = ("gemm_fp16.hip-gfx942.s2.loc.ttgir", "gluon_gemm_prefetch.cuda-80.s1.noloc.ttgir",
           "softmax.cuda-90.s1.loc.ttir", "int4_gemm.cuda-90.s3.noloc.ttgir")


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    kind = rng.choice(("truncate", "delete", "duplicate", "swap", "undefined", "garbage", "splice"))
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == "truncate":
        return text[:rng.randrange(len(text))]
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(j, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "undefined":
        lines[i] = lines[i].replace("%", "%nope_", 1)
    elif kind == "garbage":
        at = rng.randrange(len(text))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))).decode("latin-1")
        return text[:at] + junk + text[at:]
    else:   # a piece of one line pasted into another
        a, b = sorted((rng.randrange(len(lines[i]) + 1), rng.randrange(len(lines[i]) + 1)))
        lines[j] = lines[j][: len(lines[j]) // 2] + lines[i][a:b] + lines[j][len(lines[j]) // 2:]
    return "".join(lines)


@pytest.fixture(scope="module")
def sources(corpus):
    by_name = {p.name: p.read_text() for p in corpus["files"]}
    return [by_name[n] for n in SOURCES]


@pytest.mark.parametrize("block", range(6))
def test_mutated_ir_gives_an_error_or_ok_never_an_exception(sources, tmp_path, capsys, block):
    codes = {}
    for seed in SEEDS[block::6]:
        rng = random.Random(seed)
        text = mutate(rng.choice(sources), rng)
        path = tmp_path / f"m{seed}.ttgir"
        path.write_bytes(text.encode("latin-1", "replace") if not text.isascii() else text.encode())
        argv = ["ir", "check", str(path)] if seed % 3 else ["pass", "interleave-global-loads", str(path)]
        code = main(argv)
        out, err = capsys.readouterr()
        assert code in (0, 1, 2), (seed, code)
        assert "Traceback" not in out + err, (seed, err)
        if code == 2:
            assert f"{path}:" in err and ": error: " in err, (seed, err)
        codes[seed] = code
    # the mutations reach both outcomes: most break the IR, some leave it valid
    assert 2 in codes.values() and 0 in codes.values()
