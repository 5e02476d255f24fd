"""Legacy Office files (.doc, .xls, .ppt, .rtf) through LibreOffice (docs/ingester.md, "Formats").

``soffice --headless --convert-to`` turns the file into its Office Open XML
counterpart in a private temporary directory, which docling then converts.
Without ``soffice`` on PATH such files are refused, naming it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from haiku.core.convert.formats import legacy_target, unavailable_reason
from haiku.core.errors import ConversionError

SOFFICE_TIMEOUT_S = 240


def via_libreoffice(name: str, data: bytes) -> tuple[str, bytes]:
    """(converter name, bytes) of the file converted by LibreOffice."""
    suffix = Path(name).suffix.lower()
    soffice = shutil.which("soffice")
    if soffice is None:
        raise ConversionError(f"{name}: {unavailable_reason(suffix)}")
    target = legacy_target(name)
    with tempfile.TemporaryDirectory(prefix="haiku-soffice-") as tmp:
        source = Path(tmp) / f"input{suffix}"
        source.write_bytes(data)
        profile = Path(tmp, "profile").as_uri()  # a private profile: no clash with a running LibreOffice
        try:
            done = subprocess.run(
                [soffice, f"-env:UserInstallation={profile}", "--headless", "--convert-to", target,
                 "--outdir", tmp, str(source)],
                capture_output=True, timeout=SOFFICE_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            raise ConversionError(f"{name}: LibreOffice took over {SOFFICE_TIMEOUT_S} s to convert it") from None
        converted = Path(tmp) / f"input.{target}"
        if done.returncode != 0 or not converted.is_file():
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            raise ConversionError(f"{name}: LibreOffice could not convert it: {detail[0]}")
        return target, converted.read_bytes()
