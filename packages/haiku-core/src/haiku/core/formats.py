"""The format table: every file extension the converter takes, in one place (docs/ingester.md, "Formats").

Each extension names its converter and the content type recorded on the
document; code and data files also name their language. Plain data below both
the configuration (a source's default ``include_patterns`` are every extension
here) and the converter (``haiku.core.convert.formats`` adds what needs the
machine or the bytes: LibreOffice's presence, the XML doctype rule, the listing).

Files people have beyond the table's extensions: a name whose first part says
what it is (``README``, ``README.Debian``, ``copyright``, ``Makefile``) and a
name without any extension are read as text when their bytes are text
(``FileFormat.sniffed``: the name does not promise it, so a binary is skipped);
a single compressed file (``.gz``, ``.bz2``, ``.xz``) is the format of its inner
name (``changelog.Debian.gz``, ``manual.html.gz``), inflated under the size cap
of any file (``convert.file_bytes``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class FileFormat:
    converter: str  # see CONVERTERS
    content_type: str
    language: str | None = None  # code and data files: the fenced block's language
    sniffed: bool = False  # the name does not say it is text: the bytes must look like text
    compression: str | None = None  # gzip, bzip2 or xz: the bytes are inflated before anything else

    @property
    def text(self) -> bool:
        """Whether the bytes must be text (UTF-8 or cp1252, no NUL bytes)."""
        return self.converter in TEXT_CONVERTERS


# converter -> what it is, for `haiku-ingester formats`
CONVERTERS: dict[str, str] = {
    "md": "docling markdown",
    "html": "docling HTML",
    "docx": "docling Word",
    "pdf": "docling native PDF (text layer) + OCR of pages without text",
    "pptx": "docling PowerPoint",
    "xlsx": "docling Excel",
    "csv": "docling CSV",
    "asciidoc": "docling AsciiDoc",
    "latex": "docling LaTeX",
    "vtt": "docling WebVTT",
    "xml": "docling JATS / USPTO when detected, else text",
    "odt": "docling OpenDocument text",
    "ods": "docling OpenDocument sheet",
    "odp": "docling OpenDocument presentation",
    "epub": "docling EPUB",
    "email": "docling e-mail",
    "pages": "docling iWork Pages",
    "numbers": "docling iWork Numbers",
    "key": "docling iWork Keynote",
    "image": "OCR (bundled RapidOCR models)",
    "legacy": "LibreOffice (soffice) to the Office format, then docling",
    "text": "plain text",
    "code": "text, kept as a fenced code block",
}
TEXT_CONVERTERS = {"md", "html", "text", "code", "csv", "asciidoc", "latex", "vtt", "xml"}

_OOXML = "application/vnd.openxmlformats-officedocument"
_ODF = "application/vnd.oasis.opendocument"
FORMATS: dict[str, FileFormat] = {
    ".md": FileFormat("md", "text/markdown"),
    ".markdown": FileFormat("md", "text/markdown"),
    ".qmd": FileFormat("md", "text/markdown"),
    ".rmd": FileFormat("md", "text/markdown"),
    ".html": FileFormat("html", "text/html"),
    ".htm": FileFormat("html", "text/html"),
    ".xhtml": FileFormat("html", "application/xhtml+xml"),
    ".docx": FileFormat("docx", f"{_OOXML}.wordprocessingml.document"),
    ".docm": FileFormat("docx", "application/vnd.ms-word.document.macroEnabled.12"),
    ".dotx": FileFormat("docx", f"{_OOXML}.wordprocessingml.template"),
    ".pdf": FileFormat("pdf", "application/pdf"),
    ".pptx": FileFormat("pptx", f"{_OOXML}.presentationml.presentation"),
    ".pptm": FileFormat("pptx", "application/vnd.ms-powerpoint.presentation.macroEnabled.12"),
    ".ppsx": FileFormat("pptx", f"{_OOXML}.presentationml.slideshow"),
    ".potx": FileFormat("pptx", f"{_OOXML}.presentationml.template"),
    ".xlsx": FileFormat("xlsx", f"{_OOXML}.spreadsheetml.sheet"),
    ".xlsm": FileFormat("xlsx", "application/vnd.ms-excel.sheet.macroEnabled.12"),
    ".xltx": FileFormat("xlsx", f"{_OOXML}.spreadsheetml.template"),
    ".csv": FileFormat("csv", "text/csv"),
    ".adoc": FileFormat("asciidoc", "text/asciidoc"),
    ".asciidoc": FileFormat("asciidoc", "text/asciidoc"),
    ".tex": FileFormat("latex", "application/x-tex"),
    ".latex": FileFormat("latex", "application/x-latex"),
    ".vtt": FileFormat("vtt", "text/vtt"),
    ".xml": FileFormat("xml", "application/xml", "xml"),
    ".nxml": FileFormat("xml", "application/xml", "xml"),
    ".odt": FileFormat("odt", f"{_ODF}.text"),
    ".ods": FileFormat("ods", f"{_ODF}.spreadsheet"),
    ".odp": FileFormat("odp", f"{_ODF}.presentation"),
    ".epub": FileFormat("epub", "application/epub+zip"),
    ".eml": FileFormat("email", "message/rfc822"),
    ".msg": FileFormat("email", "application/vnd.ms-outlook"),
    ".pages": FileFormat("pages", "application/vnd.apple.pages"),
    ".numbers": FileFormat("numbers", "application/vnd.apple.numbers"),
    ".key": FileFormat("key", "application/vnd.apple.keynote"),
    ".doc": FileFormat("legacy", "application/msword"),
    ".xls": FileFormat("legacy", "application/vnd.ms-excel"),
    ".ppt": FileFormat("legacy", "application/vnd.ms-powerpoint"),
    ".rtf": FileFormat("legacy", "application/rtf"),
    ".txt": FileFormat("text", "text/plain"),
    ".text": FileFormat("text", "text/plain"),
    ".log": FileFormat("text", "text/plain"),
    ".rst": FileFormat("text", "text/x-rst"),
    ".org": FileFormat("text", "text/x-org"),
}

# Images go through OCR.
for _ext, _type in {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".bmp": "image/bmp",
    ".webp": "image/webp",
}.items():
    FORMATS[_ext] = FileFormat("image", _type)

# Code and data, read as text into a fenced block of their language.
_CODE: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx"),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "kotlin": (".kt", ".kts"),
    "scala": (".scala",),
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"),
    "csharp": (".cs",),
    "swift": (".swift",),
    "objectivec": (".m", ".mm"),
    "ruby": (".rb",),
    "php": (".php",),
    "perl": (".pl", ".pm"),
    "lua": (".lua",),
    "r": (".r",),
    "julia": (".jl",),
    "dart": (".dart",),
    "elixir": (".ex", ".exs"),
    "erlang": (".erl", ".hrl"),
    "haskell": (".hs",),
    "ocaml": (".ml", ".mli"),
    "clojure": (".clj", ".cljs"),
    "fsharp": (".fs", ".fsx"),
    "vbnet": (".vb",),
    "bash": (".sh", ".bash", ".zsh"),
    "fish": (".fish",),
    "powershell": (".ps1",),
    "batch": (".bat", ".cmd"),
    "sql": (".sql",),
    "groovy": (".groovy", ".gradle"),
    "css": (".css",),
    "scss": (".scss",),
    "sass": (".sass",),
    "less": (".less",),
    "vue": (".vue",),
    "svelte": (".svelte",),
    "zig": (".zig",),
    "nim": (".nim",),
    "protobuf": (".proto",),
    "graphql": (".graphql", ".gql"),
    "hcl": (".tf", ".hcl"),
    "cmake": (".cmake",),
    "elisp": (".el",),
    "lisp": (".lisp",),
    "scheme": (".scm",),
    "racket": (".rkt",),
    "fortran": (".f90",),
    "pascal": (".pas",),
    "d": (".d",),
    "solidity": (".sol",),
    "makefile": (".mk",),
    "diff": (".diff", ".patch"),
    "json": (".json", ".jsonl", ".ndjson", ".geojson"),
    "yaml": (".yaml", ".yml"),
    "toml": (".toml",),
    "ini": (".ini", ".cfg", ".conf"),
    "properties": (".properties",),
    "tsv": (".tsv",),
    "dtd": (".dtd",),
    "xslt": (".xsl", ".xslt"),
    "svg": (".svg",),
}
for _language, _extensions in _CODE.items():
    for _ext in _extensions:
        FORMATS[_ext] = FileFormat("code", "text/plain", _language)

_LEGACY_TARGET = {".doc": "docx", ".xls": "xlsx", ".ppt": "pptx", ".rtf": "docx"}


# Single-file compression, by extension: the file is the format of the name inside.
COMPRESSIONS: dict[str, str] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

# Names that say what a file is without an extension of the table, by their first part, lower-cased
# (``README.Debian``, ``LICENSE.MIT``, ``changelog.Debian``): build files are code of their language,
# the rest text. Any other name without an extension is text too when its bytes are.
_BUILD_FILES = {
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "vagrantfile": "ruby",
    "jenkinsfile": "groovy",
    "cmakelists": "cmake",
}
_DOC_FILES = (
    "readme",
    "license",
    "licence",
    "copying",
    "copyright",
    "changelog",
    "changes",
    "news",
    "authors",
    "install",
    "todo",
    "notice",
    "history",
    "thanks",
    "contributors",
    "credits",
    "bugs",
    "faq",
    "hacking",
    "maintainers",
    "announce",
    "release-notes",
    "code_of_conduct",
    "contributing",
    "security",
    "patents",
)
NAMED: dict[str, FileFormat] = {
    **{
        name: FileFormat("code", "text/plain", language, sniffed=True)
        for name, language in _BUILD_FILES.items()
    },
    **{name: FileFormat("text", "text/plain", sniffed=True) for name in _DOC_FILES},
}
_NO_EXTENSION = FileFormat("text", "text/plain", sniffed=True)


def format_of(name: str) -> FileFormat | None:
    """The format a file name (or path, or object key) names; None for a name no converter takes.

    By the extension; else by a name of ``NAMED`` (``README.Debian``); else text for a name
    without any extension (never a hidden file's); a ``.gz``, ``.bz2`` or ``.xz`` name by the name inside.
    """
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    compression = COMPRESSIONS.get(base[dot:].lower()) if dot > 0 else None
    if compression is None:
        return _plain_format_of(base)
    spec = _plain_format_of(base[:dot])
    return replace(spec, compression=compression) if spec is not None else None


def _plain_format_of(base: str) -> FileFormat | None:
    dot = base.rfind(".")
    if dot > 0 and base[dot:].lower() in FORMATS:
        return FORMATS[base[dot:].lower()]
    if base.startswith(".") or not base:
        return None  # a hidden file (.env, .netrc): never taken by its name alone
    named = NAMED.get(base.split(".", 1)[0].lower())
    if named is not None:
        return named
    return _NO_EXTENSION if dot < 0 else None


def legacy_target(name: str) -> str:
    """What LibreOffice turns a legacy Office file into (``docx``, ``xlsx`` or ``pptx``)."""
    return _LEGACY_TARGET[name[name.rfind(".") :].lower()]


def include_patterns() -> list[str]:
    """The default ``include_patterns`` of a source: every extension of the table, compressed files,
    and ``*`` for names without one (``README``, ``README.Debian``, ``copyright``), which are taken by
    their content. A name the table does not take is skipped as of an unsupported type either way."""
    return [f"*{ext}" for ext in FORMATS] + [f"*{ext}" for ext in COMPRESSIONS] + ["*"]
