"""Writing a result never destroys what it is written over: a device, a FIFO or standard output is
written in place, a symbolic link is written through (the link stays), only a regular file (or a
new path) is replaced atomically. Every command that takes an output option is run with it naming
a character device -- found from the parsers, so a new command is covered the day it is added --
and the node must still be a character device afterwards.

The device is a private one (``mknod`` of /dev/null's numbers in the test's folder), so that a
regression cannot replace the machine's own /dev/null; without the right to make one (not root),
/dev/null itself is used, which such a process cannot replace either."""
from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from irlab.base import outpaths
from irlab.base.jsonio import write_bytes, write_text
from helpers import all_parsers
from irlab.cli import build_parser, main
from irlab.cli.common import out_file, out_folder

ROOT = Path(__file__).resolve().parent.parent
IR = str(ROOT / "passes" / "tests" / "identity" / "round_trip.mlir")
CAPTURE = str(ROOT / "tests" / "data" / "captures" / "llama2-h100")

# commands whose output option takes a file: how to run each to the end (the folder options are
# refused at once, whatever else the command line says)
FILE_COMMANDS = {
    ("irlab pass", "--output"): ["pass", "identity", IR, "--split-input-file", "-q", "-o", "{out}"],
    ("irlab pass", "--json"): ["pass", "identity", IR, "--split-input-file", "-q", "--json", "{out}"],
    ("irlab report", "--json"): ["report", "--kernel", "softmax", "--target", "cuda:80", "--json", "{out}"],
    ("irlab top", "--json"): ["top", CAPTURE, "--json", "{out}"],
    ("irlab golden drift", "--out"): ["golden", "drift", "3.6.0", "3.9.0", "--out", "{out}"],
}
OUTPUT_NAMES = {"-o", "--out", "--output", "--out-root", "--json"}


def _experiment_parsers():
    """Each experiment's own parser (``irlab experiments NAME`` hands it the rest of the line)."""
    from irlab.cli import experiment_kit, experiments
    yield "irlab experiments all", experiments.all_parser()
    for name in experiments.EXPERIMENTS:
        if name != "calibrate":   # it forwards to `irlab calibrate`, covered there
            yield f"irlab experiments {name}", experiment_kit.common_args("", "runs/x", name)


def output_options() -> list[tuple[str, str, object]]:
    """(command, option, its argparse type) for every option that names where a result goes."""
    found = []
    for prog, p in list(all_parsers(build_parser(), "irlab")) + list(_experiment_parsers()):
        for a in p._actions:
            takes_value = a.nargs != 0 and not isinstance(a, argparse._StoreTrueAction)
            if takes_value and (set(a.option_strings) & OUTPUT_NAMES or a.type in (out_file, out_folder)):
                found.append((prog, max(a.option_strings, key=len), a.type))
    return found


@pytest.fixture
def device(tmp_path) -> Path:
    """A character device that discards what is written to it."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return Path("/dev/null")
    return node


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, err


def test_every_output_option_is_checked_before_any_work():
    options = output_options()
    assert len(options) >= 20, options
    unchecked = [f"{prog} {opt}" for prog, opt, kind in options if kind not in (out_file, out_folder)]
    assert unchecked == [], "give these options type=out_folder or type=out_file (irlab.cli.common)"
    files = {(prog, opt) for prog, opt, kind in options if kind is out_file}
    assert files == set(FILE_COMMANDS), "say in FILE_COMMANDS how to run each command that writes a file"


@pytest.mark.parametrize("prog,option,kind", output_options(), ids=lambda x: x if isinstance(x, str) else "")
def test_an_output_option_naming_a_device_leaves_it_a_device(prog, option, kind, device, capsys):
    if kind is out_file:
        argv = [w.replace("{out}", str(device)) for w in FILE_COMMANDS[(prog, option)]]
    else:
        argv = prog.split()[1:] + [option, str(device)]
    code, err = _run(argv, capsys)
    assert stat.S_ISCHR(os.stat(device).st_mode), f"{' '.join(argv)} replaced the device"
    assert not list(device.parent.glob(".null.*")), "a temporary file was left beside it"
    assert "Traceback" not in err
    if kind is out_file:
        assert code == 0, err
    else:
        assert code == 2 and f"argument {option}" in err and "is a character device, not a folder" in err, err


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text(fifo, "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symlink_is_written_through_and_kept(tmp_path):
    target, link = tmp_path / "real.txt", tmp_path / "link.txt"
    target.write_text("old\n")
    link.symlink_to(target)
    write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == "new\n"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "created.txt")
    write_text(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "created.txt").read_text() == "made\n"


def test_a_regular_file_is_replaced_atomically(tmp_path):
    f = tmp_path / "out.txt"
    f.write_text("old\n")
    before = f.stat().st_ino
    write_text(f, "new\n")
    assert f.read_text() == "new\n" and f.stat().st_ino != before   # a new file renamed over it


@pytest.mark.parametrize("name", ["-", "/dev/stdout"])
def test_standard_output_is_written_in_place(name):
    code = ("import sys; from irlab.base.jsonio import write_text; print('first', flush=True); "
            f"write_text({name!r}, 'second\\n'); print('third')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "first\nsecond\nthird\n", r.stderr


def test_pass_output_to_stdout_by_dash(capsys):
    code, _ = _run(["pass", "identity", IR, "--split-input-file", "-q", "-o", "-"], capsys)
    assert code == 0


def test_folder_checks_say_why_and_leave_nothing(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(outpaths.OutputPathError, match="is a file, not a folder"):
        outpaths.check_folder(tmp_path / "file")
    with pytest.raises(outpaths.OutputPathError, match="is a file, not a folder"):
        outpaths.check_folder(tmp_path / "file" / "below")
    with pytest.raises(outpaths.OutputPathError, match="is a folder, not a file"):
        outpaths.check_file(tmp_path)
    outpaths.check_folder(tmp_path / "new" / "deeper")
    outpaths.check_file(tmp_path / "new" / "result.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]   # the probes are gone, nothing was made


def test_write_bytes_into_a_device_keeps_it(device):
    write_bytes(device, b"discarded")
    assert stat.S_ISCHR(os.stat(device).st_mode)
