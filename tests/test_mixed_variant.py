"""Mixed variants (a variant per kernel of a program, as irlab search-model writes them): the file
(its spelling is tests/test_pass_spelling.py's), and the compile hook giving each kernel its own variant and compile options in
``irlab run`` and ``irlab ab-model`` -- on the CPU stand-in of Triton's driver
(tests/fakes/fake_two_kernel_model.py checks what each kernel's binary holds)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.bridge.mixed import read_mixed
from irlab.passkit.mixed import KernelIdentity, ttir_digest
from irlab.passkit.variant import VariantError
from irlab.program.model_ab import ModelAB, SubprocessRunner

TESTS = Path(__file__).parent
MODEL = TESTS / "fakes" / "fake_two_kernel_model.py"
TEST_PASSES = str(TESTS / "passes_for_tests")


def irlab(*args, cwd=None):
    env = {**os.environ, "IRLAB_PASS_PATH": TEST_PASSES}
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd, env=env)


def mixed_file(tmp_path: Path, kernels: dict, name: str = "mine") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"irlab": "mixed-variant", "version": 1, "name": name, "kernels": kernels}))
    return path


def test_a_mixed_file_resolves_each_kernel_s_variant(tmp_path):
    path = mixed_file(tmp_path, {"k1": "loop-attributes{num_stages=2}",
                                 "k2": {"variant": "optimize-epilogue", "options": {"num_warps": 8}, "why": "1.04x"}})
    m = read_mixed(path, "cuda:90")
    assert m.name == "mine" and not m.is_baseline
    assert m.choice("k1").variant.edits[0].pass_name == "loop-attributes"
    assert dict(m.choice("k1").variant.edits[0].options) == {"num_stages": 2}   # converted once, when it was read
    assert m.choice("k2").options == (("num_warps", 8),) and m.notes["k2"] == "1.04x"
    assert m.choice("other") is None
    assert json.loads(json.dumps(m.to_json()))["kernels"]["k2"] == {"variant": "optimize-epilogue",
                                                                    "options": {"num_warps": 8}, "why": "1.04x"}


@pytest.mark.parametrize("kernels, said", [
    ({"k": "no-such-pass"}, "no variant or pass named 'no-such-pass'"),
    ({"k": {"variant": "baseline", "options": {"maxnreg": 128}}}, "unknown option(s) maxnreg"),
    ({"k": {"variant": "baseline", "options": {"num_warps": 6}}}, "power of 2"),
    ({"k": 3}, "give its variant as a string"),
    ({"k": "persistent-tiles"}, "declares its own launch grid"),
    ({"k": {"variant": "baseline", "identity": {"ttir_sha256": "ab", "num_warps": 4, "num_stages": 3}}},
     "identity must be a table"),
    ({"k": {"variant": "baseline", "identity": {"ttir_sha256": "0" * 64, "num_warps": 4}}}, "identity must be a table"),
])
def test_a_bad_entry_is_one_clear_error_naming_the_kernel(tmp_path, kernels, said):
    with pytest.raises(VariantError) as e:
        read_mixed(mixed_file(tmp_path, kernels), "cuda:90")
    assert "kernel 'k'" in str(e.value) and said in str(e.value)


def test_a_file_that_is_not_a_mixed_variant_is_refused(tmp_path):
    (tmp_path / "x.json").write_text('{"kernels": {}}')
    with pytest.raises(VariantError, match="not a mixed variant file"):
        read_mixed(tmp_path / "x.json", "cuda:90")
    r = irlab("run", "--variant", str(tmp_path / "x.json"), "--", str(MODEL))
    assert r.returncode == 2 and "not a mixed variant file" in r.stderr and "Traceback" not in r.stderr
    r = irlab("ab", "--kernel", "gemm_fp16", "--variants", str(tmp_path / "x.json"), "--static-only",
              "--target", "cuda:90")
    assert r.returncode == 2 and "mixed variant file" in r.stderr and "irlab run" in r.stderr


def _checks(out: Path) -> dict:
    return {f.name.split(".")[0]: json.loads(f.read_text()) for f in (out / "checks").glob("*.json")}


def test_irlab_run_gives_each_kernel_its_own_variant_and_options(tmp_path):
    """scale_kernel gets square-output (one more multiply), shift_kernel the baseline at 8 warps
    (its binary, its metadata and its TTGIR say 8); a TOML file says the same."""
    base = irlab("run", "--variant", "baseline", "--target", "cuda:90", "--out", str(tmp_path / "base"), "--quiet",
                 "--", str(MODEL))
    assert base.returncode == 0, base.stderr
    path = mixed_file(tmp_path, {"scale_kernel": "square-output",
                                 "shift_kernel": {"variant": "baseline", "options": {"num_warps": 8}},
                                 "never_compiled": "optimize-epilogue"})
    r = irlab("run", "--variant", str(path), "--target", "cuda:90", "--out", str(tmp_path / "mixed"), "--quiet",
              "--", str(MODEL))
    assert r.returncode == 0, r.stderr
    b, m = _checks(tmp_path / "base"), _checks(tmp_path / "mixed")
    assert m["scale_multiplies"] > b["scale_multiplies"] and m["shift_multiplies"] == b["shift_multiplies"]
    assert (b["scale_warps"], b["shift_warps"], b["shift_ttgir_warps"]) == (4, 4, 4)
    assert (m["scale_warps"], m["shift_warps"], m["shift_ttgir_warps"]) == (4, 8, 8)
    run = json.loads((tmp_path / "mixed" / "run.json").read_text())
    assert run["mixed"]["compiled"] == {"scale_kernel": "square-output", "shift_kernel": "baseline at num_warps=8"}
    assert "2 of 3 kernel(s) it lists compiled with their own variant" in r.stderr
    assert "not reached: never_compiled: never compiled in this run" in r.stderr
    toml = tmp_path / "mine.toml"
    toml.write_text('irlab = "mixed-variant"\nversion = 1\n[kernels]\nscale_kernel = "square-output"\n')
    r = irlab("run", "--variant", str(toml), "--target", "cuda:90", "--out", str(tmp_path / "toml"), "--quiet",
              "--", str(MODEL))
    assert r.returncode == 0, r.stderr
    t = _checks(tmp_path / "toml")
    assert t["scale_multiplies"] == m["scale_multiplies"] and t["shift_warps"] == 4


def test_ab_model_takes_a_mixed_variant_file(tmp_path, monkeypatch):
    """The A/B's variant arm runs the mixed file: each kernel's binary differs from the baseline's
    (one by its pass, one by its warps), and the checked values say which."""
    path = mixed_file(tmp_path, {"scale_kernel": "square-output",
                                 "shift_kernel": {"variant": "baseline", "options": {"num_warps": 8}}})
    monkeypatch.setenv("IRLAB_PASS_PATH", TEST_PASSES)
    result = ModelAB([str(MODEL)], str(path), tmp_path / "ab", rounds=1, profile=False,
                     runner=SubprocessRunner([str(MODEL)], target="cuda:90", timeout_s=300)).run()
    assert "error" not in result, result.get("error")
    assert {r["kernel"]: r["binary"] for r in result["kernels"]} == {"scale_kernel": "different",
                                                                     "shift_kernel": "different"}
    assert result["mixed"]["reached"] == {"scale_kernel": ["scale_kernel"], "shift_kernel": ["shift_kernel"]}
    status = {c["name"]: c["status"] for c in result["correctness"]["checks"]}
    assert status["scale_multiplies"] == "MISMATCH" and status["shift_warps"] == "MISMATCH"
    assert status["scale_warps"] == "identical" and status["shift_multiplies"] == "identical"


def test_the_ttir_digest_names_neither_file_nor_kernel():
    one = ('#loc = loc("/tmp/a/c1.py":3:0)\nmodule {\n  tt.func public @triton_poi_3(%arg0: i32 loc("x"(#loc))) '
           '{\n    tt.return loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n')
    other = one.replace("/tmp/a/c1.py", "/tmp/b/c9.py").replace("triton_poi_3", "triton_poi_7")
    assert ttir_digest(one, "triton_poi_3") == ttir_digest(other, "triton_poi_7")
    assert ttir_digest(one, "triton_poi_3") != ttir_digest(one.replace("i32", "i64"), "triton_poi_3")
    assert ttir_digest(one, "triton_poi_3") != ttir_digest(other, "triton_poi_3")   # its own name only


def _identity(run: Path, kernel: str, **config) -> dict:
    folder = next(run.glob(f"{kernel}.*"))
    md = json.loads((folder / "metadata.json").read_text())
    return KernelIdentity.of((folder / f"{kernel}.ttir").read_text(), kernel, config.get("num_warps", md["num_warps"]),
                             config.get("num_stages", md["num_stages"])).to_json()


def test_an_entry_with_an_identity_goes_to_that_kernel_whatever_the_program_calls_it(tmp_path):
    """A program run again may give a kernel's name to another kernel (Inductor numbers them as it
    makes them). An entry that carries the identity of the kernel it was chosen for (its TTIR and
    config) reaches that kernel under any name, and a kernel with the entry's name but not its
    identity stays the baseline; the run says both."""
    base = irlab("run", "--variant", "baseline", "--target", "cuda:90", "--out", str(tmp_path / "base"), "--quiet",
                 "--", str(MODEL))
    assert base.returncode == 0, base.stderr
    b = _checks(tmp_path / "base")
    shift, scale = _identity(tmp_path / "base", "shift_kernel"), _identity(tmp_path / "base", "scale_kernel")

    def run(name: str, kernels: dict):
        r = irlab("run", "--variant", str(mixed_file(tmp_path, kernels, name)), "--target", "cuda:90",
                  "--out", str(tmp_path / name), "--quiet", "--", str(MODEL))
        assert r.returncode == 0, r.stderr
        return r, _checks(tmp_path / name), json.loads((tmp_path / name / "run.json").read_text())["mixed"]

    # the choice made for shift_kernel, filed under the name scale_kernel
    r, m, mixed = run("renamed", {"scale_kernel": {"variant": "square-output", "identity": shift,
                                                   "options": {"num_warps": 8}}})
    assert m["shift_multiplies"] > b["shift_multiplies"] and m["scale_multiplies"] == b["scale_multiplies"]
    assert (m["shift_warps"], m["shift_ttgir_warps"], m["scale_warps"]) == (8, 8, 4)
    assert mixed["reached"] == {"scale_kernel": ["shift_kernel"]}
    assert mixed["compiled"]["scale_kernel"].startswith("baseline: listed for square-output")
    assert "recognised by identity under another name: scale_kernel as shift_kernel" in r.stderr
    # its own name and identity: checked, and taken
    r, m, mixed = run("same", {"scale_kernel": {"variant": "square-output", "identity": scale}})
    assert m["scale_multiplies"] > b["scale_multiplies"] and m["shift_multiplies"] == b["shift_multiplies"]
    assert mixed["compiled"]["scale_kernel"] == "square-output (its identity checked)"
    # the same TTIR at another config is not the kernel the choice was timed on
    r, m, mixed = run("config", {"scale_kernel": {"variant": "square-output",
                                                  "identity": _identity(tmp_path / "base", "scale_kernel",
                                                                        num_warps=8)}})
    assert m == b and mixed["reached"] == {}
    assert "not reached: scale_kernel: compiled, as baseline: listed for square-output" in r.stderr
    assert "1 of 1" not in r.stderr and "0 of 1 kernel(s) it lists compiled with their own variant" in r.stderr


def test_a_model_a_b_says_which_choices_did_not_reach_their_kernel():
    """The A/B of a mixed variant, and search-model's decision, say which choices the program's run
    compiled (under which names) and which it did not: an end-to-end ratio confirms only those."""
    from irlab.program.model_ab import summary_lines
    from irlab.timing.model_search_report import decision_lines
    why = "compiled, as baseline: listed for a, but not the kernel that was chosen (...)"
    mixed = {"file": "/x/mixed-variant.json", "kernels": {"k_7": "a", "k_8": "b"},
             "compiled": {"k_7": "baseline: listed for a, but ...", "k_9": "b (recognised by its identity: listed as k_8)"},
             "reached": {"k_8": ["k_9"]}, "missed": {"k_7": why}}
    lines = summary_lines({"rounds": 10, "mixed": mixed})
    assert ("mixed variant mixed-variant.json: 1 of 2 kernel(s) it lists compiled with their own variant (recognised "
            "by identity under another name: k_8 as k_9), 1 other kernel(s) as the baseline") in lines
    assert f"not reached: k_7: {why}" in lines
    data = {"interrupted": False, "complete": True, "phase": "done", "mixed_variant": "/x/mixed-variant.json",
            "kernels": [{"kernel": "k_7", "choice": "a", "share": 0.2, "best": None},
                        {"kernel": "k_8", "choice": "b", "share": 0.3, "best": None}], "model_ab": {"mixed": mixed}}
    assert (f"model A/B: confirms 1 of 2 choice(s) only: the program's run did not compile the kernel the others were "
            f"chosen for -- k_7: {why}") in decision_lines(data)
    assert not any("confirms" in line for line in decision_lines({**data, "model_ab": {
        "mixed": {**mixed, "reached": {"k_7": ["k_7"], "k_8": ["k_8"]}, "missed": {}}}}))


def test_an_a_b_whose_mixed_variant_reached_no_kernel_times_nothing(tmp_path):
    """Where the program's run compiled none of the kernels the mixed variant lists (Inductor made
    other kernels this time), its arm is the baseline again: the A/B says so and times no round."""
    from tests.fakes.fake_arm_runner import FakeArmRunner
    missed = {"k_7": "never compiled in this run", "k_8": "compiled, as baseline: listed for b, but not the kernel"}
    arms = FakeArmRunner({"baseline": 10.0, "variant": 10.0}, mixed={"variant": {
        "file": "m.json", "kernels": {"k_7": "a", "k_8": "b"}, "compiled": {"k_8": missed["k_8"]}, "reached": {},
        "missed": missed}})
    result = ModelAB(["model.py"], "m.json", tmp_path / "ab", rounds=10, profile=False, runner=arms).run()
    assert result["error"].startswith("the mixed variant reached none of the kernels it lists in the program's run "
                                      "(k_7: never compiled in this run; k_8: compiled, as baseline")
    assert not any(timed for _, _, timed in arms.calls)
    assert "not reached: k_7: never compiled in this run" in (tmp_path / "ab" / "README.md").read_text()


def test_without_a_toml_reader_a_json_file_still_reads_and_a_toml_one_says_what_is_missing(tmp_path, monkeypatch):
    """Python 3.10 has no tomllib: the module still imports, a JSON file reads, a TOML file is one
    clear error naming tomli."""
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "tomllib", None)   # `import tomllib` raises ModuleNotFoundError
    monkeypatch.setitem(sys.modules, "tomli", None)
    import irlab.bridge.mixed as mixed
    importlib.reload(mixed)
    assert mixed.read_mixed(mixed_file(tmp_path, {"k": "baseline"}), "cuda:90").choice("k") is not None
    toml = tmp_path / "m.toml"
    toml.write_text('irlab = "mixed-variant"\nversion = 1\n[kernels]\nk = "baseline"\n')
    with pytest.raises(VariantError, match="needs the tomli package"):
        mixed.read_mixed(toml, "cuda:90")
