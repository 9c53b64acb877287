"""Run one ``## `` section of README.md as a reader would: in the current folder, against the irlab
installed in this Python (no checkout on the path), its files written and its blocks run in order;
GPU blocks are skipped; the files a section takes from a guide (``files-from``) are written first.
`.ci/installed` runs the own-kernel path this way on the built wheel.

    python .ci/readme_section.py "Your own kernel"      # a section whose heading starts so
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TEST = Path(__file__).resolve().parent.parent / "tests" / "test_readme.py"


def main(heading: str) -> int:
    spec = importlib.util.spec_from_file_location("readme_blocks", TEST)
    readme = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(readme)
    blocks = [b for b in readme.page_blocks(readme.README) if b.heading.startswith(heading)]
    if not blocks:
        print(f"README.md has no section starting {heading!r}", file=sys.stderr)
        return 2
    for block in blocks:
        if block.lang == "text" or block.mark in ("ci", "gpu"):
            continue
        print(f"== {block.id} ({block.mark or block.lang}{' ' + block.arg if block.arg else ''})", flush=True)
        readme.run_block(block, Path.cwd(), checkout=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
