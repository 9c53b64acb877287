"""The hypotheses' profiles: every hypothesis of docs/results/hypotheses.md is either profiled by
lab.profile_hypotheses or named with the reason it has no kernel, and the summary table
reads the recorded H200 profiles."""
from __future__ import annotations

import re
from pathlib import Path

from lab import profile_hypotheses as ph

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "docs/results/persistent_tma/h200/profiles"


def test_every_logged_hypothesis_is_profiled_or_says_why_not():
    logged = set(re.findall(r"\bH(\d{1,2})\b", (ROOT / "docs/results/hypotheses.md").read_text()))
    known = set(ph.HYPOTHESES) | set(ph.NOT_PROFILED)
    assert {f"H{n}" for n in logged} <= known, sorted({f"H{n}" for n in logged} - known)
    assert not set(ph.HYPOTHESES) & set(ph.NOT_PROFILED)


def test_the_summary_reads_the_recorded_profiles():
    rows = {r.split("|")[1].strip(): r for r in ph.summary(RECORDED)[2:]}
    assert "187.45 -> 183.56 (-2.1%)" in rows["[H20](H20/README.md)"]
    assert "25.7 -> 18.8%" in rows["[H20](H20/README.md)"]          # long_scoreboard over the hot loop
    assert "not profiled" in rows["H25"] and "hopper_warpspec" in rows["H25"]
    assert list(rows)[:2] == ["[H1](H1/README.md)", "[H2](H2/README.md)"]   # numeric order: H2 before H10


def test_the_summary_refuses_a_missing_folder(tmp_path, capsys):
    assert ph.main(["--summary", str(tmp_path / "none")]) == 2
    assert "no folder" in capsys.readouterr().err
