"""The converter lives in haiku.core behind the ``convert`` extra (docs/ingester.md, "Formats").

Importing it loads no docling; building a ``Converter`` without docling says
which extra to install, in one line.
"""

from __future__ import annotations

import subprocess
import sys

from haiku.core.embedders import local_model_path


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_the_converter_loads_no_docling():
    done = _run(
        "import haiku.core.convert, haiku.core.convert.converter, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('docling', 'docling_core', 'torch')))"
    )
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_without_docling_building_a_converter_names_the_convert_extra():
    done = _run(
        "import sys; sys.modules['docling'] = None\n"
        "from haiku.core.convert import Converter\n"
        "from haiku.core.errors import ConverterUnavailableError\n"
        "try:\n"
        f"    Converter(tokenizer_dir={local_model_path()!r}, chunk_size=64)\n"
        "except ConverterUnavailableError as exc:\n"
        "    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "haiku-core[convert]" in done.stdout and "docling" in done.stdout
