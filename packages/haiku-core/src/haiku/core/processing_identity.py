"""The processing identity: the settings that shape what a database stores (docs/ingester.md, "Re-processing").

A database records it, as it records its embedder, so a changed configuration
is noticed: ``haiku-ingester serve``/``run-batch`` warn, ``haiku-ingester
status`` and ``haiku-rag doctor`` show it, ``haiku-ingester reprocess`` makes
the database match it again.

It is one flat JSON object, each key named as the user knows it:

* every ``processing.*`` key, except the few in ``NOT_STORED`` (a key added to
  the configuration is covered without anyone listing it; a nested section
  flattens to dotted keys);
* ``chunker``: the chunker and the tokenizer whose tokens ``chunk_size`` counts;
* ``converter.*``: the versions of the packages that convert (docling and its
  parts) and ``converter.rules``, the revision of haiku's own conversion rules;
* ``formats.EXT``: what each extension of the format table becomes (its
  converter, content type and language), one key per extension, so a change of
  the table is a change only for the extensions it touches; an extension added
  to the table is no change at all (a database holds no file of it yet).

Computing it loads no model library: versions come from the installed
distributions' metadata. Where docling is not installed (a ``haiku-rag``
without the ``convert`` extra) the ``converter.*`` versions are left out, and
a comparison leaves out what one side lacks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from haiku.core.config import AppConfig

# `processing.*` keys (dotted below a section) that do not shape what is stored: how long a conversion
# may take, and where and how the picture model is reached, are not what they make.
NOT_STORED: frozenset[str] = frozenset(
    {
        "conversion_timeout_s",
        "picture_model.base_url",
        "picture_model.api_key_env",
        "picture_model.timeout_s",
        "picture_model.concurrency",
    }
)

# The revision of haiku's own conversion and chunking rules (cleaning, titles, serializers, code
# blocks): raised whenever a change to them changes what an unchanged file is stored as.
CONVERSION_RULES = 13  # 2: PDF ruled tables, compacted heading levels, paragraphs joined across pages;
# 3: a table over the chunk budget split between its cells; 4: declared titles first (web pages'
# <h1>/<title>, document properties, LaTeX \title), Python chunks headed by their class and function,
# scans read upright, every TIFF page, at 216 dpi, line by line with a box per line; 5: code chunks of
# other languages headed by their scopes (tree-sitter), LaTeX macros expanded, tables of contents and
# web pages' navigation out of chunks, files without an extension and compressed files read;
# 6: tables read a row per line, headers of several rows combined, empty cells left out, rows
# named by their key columns; sheet names as headings, cell comments kept
# 7: PDF headings by the text layer's type sizes and weights, title pages, chapter labels joined,
# dates, callouts, list items and contents entries no headings, a PDF's title never a cover's word
# 8: a scan's lines cut along their (skewed) boxes, its paragraphs split by the page's own line gap
# and type size
# 9: PDF tables ruled without a frame (or around header and body only) read from their rules,
# unruled tables (the model's, or between three booktabs rules) by the gaps between their runs (a
# line split where a column's gap parts it), wrapped cells kept in one cell; a figure's labels and
# gridlines (a grid over a third empty, or cutting its words) stay text
# 10: right-to-left PDF lines drawn run by run joined in logical order, their pages' right column
# read first, Arabic and Hebrew presentation forms as their letters; PDF contents pages, contents
# lists that repeat the headings and a running header read as one line kept out of the chunks;
# web pages titled past a site's banner <h1>, their headings' permalinks (¶) removed
# 11: scans read column by column, their larger and bold lines headings (the first titling the
# scan); notes around a sheet's table read as text, not rows, a one-row sheet table a note; a
# document property named like a file or template ("xinxinli-blue-squares") or "document title"
# no title
# 12: PDF fonts bold by their names before pdfium's weight (LaTeX's regular read as bold), italic
# subsubsections headings, formulas, echoed code and the lines under a paper's title none; code
# cells of PDF tables kept whole, a long left-set entry spanning no column; an article's large
# authors and bold code no headings, a title's footnote mark dropped; pages of dingbats OCR'd;
# a split slide title one heading; a scan's cover measured against its document
# 13: journal papers: a title the layout model calls a caption, a grid of authors, TeX's asterisk
# marks, an abstract set large, keyword lines, figure labels and sideways banners no headings;
# small numbered bold heads and heads beside the other column headings; wrapped heads joined across
# columns; running headers matched at their size; chart markers no page numbers; roman section
# numbers an outline; a "Contents" or "Abstract" heading no title

# The distributions whose version changes what a file converts to.
CONVERTER_PACKAGES = ("docling-slim", "docling-core", "docling-parse", "rapidocr-onnxruntime", "rapid-layout")

CHUNKER = "docling HybridChunker"


def processing_identity(config: AppConfig) -> dict[str, Any]:
    """The identity the configuration gives, as a database records it."""
    identity: dict[str, Any] = {}
    settings = config.processing.model_dump(mode="json")
    for key in sorted(settings):
        _flatten(identity, key, settings[key])
    identity = {f"processing.{key}": value for key, value in identity.items() if key not in NOT_STORED}
    identity["chunker"] = f"{CHUNKER}, tokenizer {_tokenizer_name(config)}"
    for package in CONVERTER_PACKAGES:
        version = _version(package)
        if version is not None:
            identity[f"converter.{package.removesuffix('-slim')}"] = version
    identity["converter.rules"] = CONVERSION_RULES
    identity.update(format_entries())
    return identity


def _flatten(into: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, dict):
        for inner in sorted(value):
            _flatten(into, f"{key}.{inner}", value[inner])
    else:
        into[key] = value


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _tokenizer_name(config: AppConfig) -> str:
    """The model whose tokenizer the chunker counts with (the rule of ``tokenizer_dir``)."""
    from haiku.core.convert.files import tokenizer_dir
    from haiku.core.embedders import DEFAULT_LOCAL_MODEL, EmbeddingError, local_model_path

    try:
        default = local_model_path()
    except EmbeddingError:  # the default model is not installed here: the configured one counts
        return config.embeddings.model.name
    return DEFAULT_LOCAL_MODEL if tokenizer_dir(config) == default else config.embeddings.model.name


FORMAT_PREFIX = "formats."
# What records written before the per-extension entries hold instead: one digest of the whole table.
_LEGACY_FORMATS_KEY = "formats"


def format_entries() -> dict[str, str]:
    """``formats.EXT`` -> ``converter content-type [language]`` for each extension of the format table."""
    from haiku.core.convert.formats import FORMATS

    return {
        f"{FORMAT_PREFIX}{ext.removeprefix('.')}": " ".join(filter(None, (spec.converter, spec.content_type, spec.language)))
        for ext, spec in sorted(FORMATS.items())
    }


def format_table_digest() -> str:
    """12 hex digits naming the whole format table, as records of older releases hold it under ``formats``."""
    from haiku.core.convert.formats import FORMATS

    rows = [[ext, spec.converter, spec.content_type, spec.language] for ext, spec in sorted(FORMATS.items())]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:12]


def identity_digest(identity: dict[str, Any]) -> str:
    """12 hex digits naming a whole identity, to tell two apart without listing them."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:12]


# --- comparing ------------------------------------------------------------------------------

DriftState = Literal["matches", "differs", "unknown", "empty"]


@dataclass(frozen=True)
class ProcessingChange:
    key: str
    recorded: Any  # None when the database's record lacks the key
    configured: Any

    def describe(self) -> str:
        before = "not recorded" if self.recorded is None else _show(self.recorded)
        return f"{self.key} {before} -> {_show(self.configured)}"

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "recorded": self.recorded, "configured": self.configured}


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class ProcessingDrift:
    """How a database's recorded identity stands against the configured one.

    ``matches``; ``differs`` (``changes`` names each key); ``unknown`` (documents
    stored, no identity recorded: written before identities were recorded, so
    nothing is guessed); ``empty`` (no identity and no documents: the ingester
    records the configured one on its first run). ``formats_added`` names the
    extensions the format table gained since the record, whatever the state.
    """

    state: DriftState
    changes: tuple[ProcessingChange, ...] = ()
    formats_added: tuple[str, ...] = ()  # extensions the format table gained since the record: no change

    def describe(self) -> str:
        """The changes on one line: ``processing.chunk_size 256 -> 128, …``."""
        return ", ".join(change.describe() for change in self.changes)

    def summary(self, database: str, *, reprocess: str | None = None) -> str:
        """One sentence for the ingester's warning and ``doctor``, naming the database."""
        from haiku.core.errors import database_label

        return f"{database_label(database)} {self.predicate(database, reprocess=reprocess)}"

    def predicate(
        self,
        database: str,
        *,
        kept_by: str | None = None,
        reprocess: str | None = None,
        restart: str | None = None,
    ) -> str:
        """The sentence without its subject (``status`` prints it under the database's name).

        ``kept_by`` names a running ingester (``serve (pid 12)``) that keeps other settings than the
        configured ones: a reload does not change them, so files it ingests now do not get the
        configured ones. ``reprocess`` and ``restart`` are how the front end that shows the sentence
        re-processes a database and restarts the ingester (its commands); the library's words otherwise.
        """
        hint = reprocess or "a reprocess of the database"
        if kept_by is not None and self.state in ("differs", "unknown"):
            how = f" ({restart})" if restart else ""
            return (
                f"{self._recorded_part()}; the running {kept_by} does not take changed processing "
                f"settings on a reload and keeps ingesting with those it started with until it is restarted{how}; "
                f"after that files ingested use the configured ones, and {hint} re-processes the others"
            )
        if self.state == "matches":
            return "was processed with the configured settings"
        if self.state == "empty":
            return "holds no documents yet; the ingester records its settings on its first run"
        if self.state == "unknown":
            return (
                "records no processing settings (it was written by an older haiku-ingester), so whether "
                f"its chunks match the configuration is unknown; {hint} re-processes it and records them"
            )
        return (
            f"was processed with other settings than configured ({self.describe()}); files ingested "
            f"from now on use the configured ones, {hint} re-processes the others"
        )

    def _recorded_part(self) -> str:
        if self.state == "unknown":
            return "records no processing settings (it was written by an older haiku-ingester)"
        return f"was processed with other settings than configured ({self.describe()})"

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "changes": [change.as_json() for change in self.changes],
            "formats_added": list(self.formats_added),
        }


def compare_processing(recorded: dict[str, Any] | None, configured: dict[str, Any], *, documents: int) -> ProcessingDrift:
    """The drift of ``recorded`` (a database's record, None if none) from ``configured``.

    Only keys the configured identity has are compared (a version this machine
    cannot read is not a change); a key the record lacks is a change, except an
    extension's ``formats.EXT`` entry: an extension added to the format table is
    listed in ``formats_added`` and changes nothing the database holds. A record
    of an older release holds one digest of the table (``formats``) instead: the
    table is a change only when that digest differs from the configured table's.
    """
    if recorded is None:
        return ProcessingDrift("empty" if documents == 0 else "unknown")
    legacy = recorded.get(_LEGACY_FORMATS_KEY)
    changes: list[ProcessingChange] = []
    added: list[str] = []
    for key, value in configured.items():
        if key.startswith(FORMAT_PREFIX) and isinstance(legacy, str):
            continue  # compared as one digest below
        if key.startswith(FORMAT_PREFIX) and key not in recorded:
            added.append(key.removeprefix(FORMAT_PREFIX))
        elif recorded.get(key) != value:
            changes.append(ProcessingChange(key, recorded.get(key), value))
    if isinstance(legacy, str) and any(key.startswith(FORMAT_PREFIX) for key in configured):
        digest = format_table_digest()
        if legacy != digest:
            changes.append(ProcessingChange(_LEGACY_FORMATS_KEY, legacy, digest))
    return ProcessingDrift("differs" if changes else "matches", tuple(changes), tuple(added))


# --- describing -----------------------------------------------------------------------------


def describe_recorded(recorded: dict[str, Any] | None, *, documents: int, reprocess: str | None = None) -> str:
    """A database's recorded identity on one line, as ``info`` and the inspector show it:
    its ``processing.*`` settings and the conversion rules' revision (``info --json`` has it whole).

    ``reprocess`` is how the front end re-processes a database (its command); the library's words otherwise.
    """
    if recorded is None:
        if documents == 0:
            return "not recorded yet (no documents; the ingester records it on its first run)"
        return f"not recorded (written by an older haiku-ingester; {reprocess or 'a reprocess'} records it)"
    settings = [
        f"{key.removeprefix('processing.')} {_show(value)}"
        for key, value in sorted(recorded.items())
        if key.startswith("processing.")
    ]
    rules = recorded.get("converter.rules")
    if rules is not None:
        settings.append(f"conversion rules {_show(rules)}")
    return ", ".join(settings) or "recorded (no settings named)"
