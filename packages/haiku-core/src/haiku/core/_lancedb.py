"""Importing LanceDB without the parts a local or ``s3://`` database never uses.

``import lancedb`` costs about three seconds on a small machine, and most of it
is not LanceDB: ``lancedb.db`` imports ``lance_namespace``, whose package
imports the generated REST client ``lance_namespace_urllib3_client`` (every API
class and about 150 pydantic request/response models); on Python 3.11 every
``@override`` in LanceDB runs the ``overrides`` package's signature check
(bytecode inspection of each class); and ``pyarrow.dataset`` imports pandas to
learn whether it is installed. A database opened by path or by an object-store
URI uses none of them, and a command-line search pays the whole cost on every
run (docs/benchmarks.md, "Command-line latency").

``import_lancedb()`` imports the same ``lancedb`` with these deferred:

- ``lance_namespace`` and the REST client: their package bodies run only when
  something first uses a name from them (a namespace connection); until then
  LanceDB holds stand-ins that load the real object on first use;
- ``lancedb.functions`` (the user-defined-function API: some 40 pydantic
  models, ~50 ms) and ``lancedb.namespace`` (namespace-backed connections and
  the REST query models they send, ~30 ms) run when one of their names is
  first used; LanceDB holds stand-ins meanwhile (it names them only in
  annotations and function bodies);
- ``lancedb.embeddings``: the base classes and the registry import as
  usual, while the package body, which imports and registers every hosted
  embedding function (OpenAI, Bedrock, CLIP …, ~80 ms of pydantic models),
  runs when another of its names is first used or the registry is asked for
  a function (a table whose schema names one);
- ``@override`` marks the method, as ``typing.override`` does (what LanceDB
  uses on Python 3.12 and later), without the import-time signature check;
- with ``hide_pandas_from_lancedb()`` (the ``haiku-rag`` command, which never
  converts to pandas), pandas is reported missing while LanceDB imports.
  pyarrow then answers "no pandas" to its quiet checks; anything that needs
  pandas (``to_pandas()``) still imports it on demand, since pyarrow retries.

Every class and function LanceDB runs is its own. When the installed packages
do not have the expected layout, the plain import runs.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

_NAMESPACE = "lance_namespace"
_CLIENT = "lance_namespace_urllib3_client"
_MODELS = f"{_CLIENT}.models"
_FUNCTIONS = "lancedb.functions"
_LANCEDB_NAMESPACE = "lancedb.namespace"
_EMBEDDINGS = "lancedb.embeddings"
# What LanceDB itself takes from lancedb.embeddings, and the submodule defining each.
_EMBEDDINGS_LIGHT = {
    "EmbeddingFunction": "base",
    "EmbeddingFunctionConfig": "base",
    "TextEmbeddingFunction": "base",
    "EmbeddingFunctionRegistry": "registry",
    "get_registry": "registry",
    "register": "registry",
}

# LanceDB's own modules deferred: (name, is a package, names served without the package body).
_EXTRAS: tuple[tuple[str, bool, dict[str, str] | None], ...] = (
    (_FUNCTIONS, False, None),
    (_LANCEDB_NAMESPACE, False, None),
    (_EMBEDDINGS, True, _EMBEDDINGS_LIGHT),
)

_hide_pandas = False


def hide_pandas_from_lancedb() -> None:
    """Have the next ``import_lancedb()`` import LanceDB with pandas reported missing.

    For processes that never hand pandas objects to pyarrow (the ``haiku-rag``
    command); it saves the pandas import (~0.4 s).
    """
    global _hide_pandas
    _hide_pandas = True


_TYPING_PROBES = frozenset({"__parameters__", "__origin__", "__args__"})


class _Deferred:
    """Stands for ``module.name`` until first used, then forwards to the real object."""

    __slots__ = ("_haiku_module", "_haiku_name", "_haiku_target")

    def __init__(self, module: _DeferredPackage, name: str) -> None:
        object.__setattr__(self, "_haiku_module", module)
        object.__setattr__(self, "_haiku_name", name)
        object.__setattr__(self, "_haiku_target", None)

    def _haiku_resolve(self) -> Any:
        target = object.__getattribute__(self, "_haiku_target")
        if target is None:
            module = object.__getattribute__(self, "_haiku_module")
            # Called on the class: once loaded, the module is a plain module without the method.
            loaded = _DeferredPackage._haiku_load(module)
            target = getattr(loaded, object.__getattribute__(self, "_haiku_name"))
            object.__setattr__(self, "_haiku_target", target)
        return target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__typing") or name in _TYPING_PROBES:
            # typing probes annotations like ``Job[FunctionVersion]`` at class creation; a
            # plain class has none of these, so the answer is the same without loading it.
            raise AttributeError(name)
        return getattr(self._haiku_resolve(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._haiku_resolve()(*args, **kwargs)

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(instance, self._haiku_resolve())

    def __subclasscheck__(self, subclass: Any) -> bool:
        return issubclass(subclass, self._haiku_resolve())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        return (self._haiku_resolve(),)

    def __repr__(self) -> str:
        module = object.__getattribute__(self, "_haiku_module")
        return f"<deferred {module.__name__}.{object.__getattribute__(self, '_haiku_name')}>"


class _DeferredPackage(types.ModuleType):
    """A module or package whose body runs when something first needs it.

    A package's submodules import as usual meanwhile (``__path__`` is the
    real one). With ``stand_ins``, ``from module import name`` gives a
    ``_Deferred``; a name in ``light`` comes from the submodule it names,
    without the package body; any other name runs the body first.
    """

    def __init__(
        self, spec: importlib.machinery.ModuleSpec, *, stand_ins: bool, light: dict[str, str] | None = None
    ) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__loader__ = spec.loader
        self.__file__ = spec.origin
        if spec.submodule_search_locations is not None:
            self.__package__ = spec.name
            self.__path__ = list(spec.submodule_search_locations)
        else:
            self.__package__ = spec.parent
        self._haiku_stand_ins = stand_ins
        self._haiku_light = light or {}

    def _haiku_load(self) -> types.ModuleType:
        if type(self) is _DeferredPackage:
            spec = self.__spec__
            self.__class__ = types.ModuleType  # from here on, the real package
            if self.__name__.startswith("lancedb."):  # as the rest of LanceDB was imported
                with _marked_overrides():
                    spec.loader.exec_module(self)  # type: ignore[union-attr]
            else:
                spec.loader.exec_module(self)  # type: ignore[union-attr]
        return self

    def __getattr__(self, name: str) -> Any:
        if name == "__path__":  # the import system asking whether a plain module is a package
            raise AttributeError(name)
        light = self.__dict__.get("_haiku_light", {})
        if name in light and type(self) is _DeferredPackage:
            value = getattr(importlib.import_module(f"{self.__name__}.{light[name]}"), name)
            setattr(self, name, value)
            return value
        if self.__dict__.get("_haiku_stand_ins") and not name.startswith("__"):
            return _Deferred(self, name)
        return getattr(self._haiku_load(), name)


def _defer(
    name: str,
    *,
    stand_ins: bool,
    light: dict[str, str] | None = None,
    package: bool = True,
    search: list[str] | None = None,
) -> bool:
    """Put a ``_DeferredPackage`` for ``name`` in place, if it is found as expected (a package or not).

    ``search``: the parent package's path, for a submodule whose parent must not
    run yet (``find_spec`` of a submodule imports its parent).
    """
    if name in sys.modules:
        return False
    if search is None:
        spec = importlib.util.find_spec(name)
    else:
        spec = importlib.machinery.PathFinder.find_spec(name, search)
    if spec is None or spec.loader is None or package != (spec.submodule_search_locations is not None):
        return False
    sys.modules[name] = _DeferredPackage(spec, stand_ins=stand_ins, light=light)
    return True


def _defer_namespace_packages() -> None:
    # The client package first: finding ``models`` imports its parent.
    if _defer(_CLIENT, stand_ins=False):
        if _defer(_MODELS, stand_ins=False):
            sys.modules[_CLIENT].models = sys.modules[_MODELS]  # type: ignore[attr-defined]
    _defer(_NAMESPACE, stand_ins=True)


def _defer_lancedb_extras() -> None:
    root = importlib.util.find_spec("lancedb")  # the top package only: its body does not run
    if root is None or not root.submodule_search_locations:
        return
    search = list(root.submodule_search_locations)
    for name, package, light in _EXTRAS:
        _defer(name, stand_ins=not package, light=light, package=package, search=search)


def _load_embeddings_on_lookup() -> None:
    """The registry knows a function only once the package body has registered them all."""
    embeddings = sys.modules.get(_EMBEDDINGS)
    registry = sys.modules.get(f"{_EMBEDDINGS}.registry")
    if type(embeddings) is not _DeferredPackage or registry is None:
        return
    cls = registry.EmbeddingFunctionRegistry
    lookup = cls.get

    def get(self: Any, name: str) -> Any:
        _DeferredPackage._haiku_load(embeddings)
        cls.get = lookup  # every function is registered from here on
        return lookup(self, name)

    cls.get = get


def _forget_deferred_extras() -> None:
    """After a failed import, leave nothing half-deferred for the plain import to trip on."""
    for name, _, _ in _EXTRAS:
        if type(sys.modules.get(name)) is _DeferredPackage:
            del sys.modules[name]


def _mark_override(method: Any = None, **_options: Any) -> Any:
    """``typing.override``'s behaviour: mark the method, check nothing."""
    if method is None:
        return _mark_override
    try:
        method.__override__ = True
    except (AttributeError, TypeError):
        pass
    return method


class _PandasHidden:
    """A meta-path finder that reports pandas missing (while LanceDB imports)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


# Lance warns "partition N is empty, skipping" for every partition a write's rows miss
# when it indexes them as a delta beside a vector index: about a hundred lines per write
# at a million chunks, in a daemon's log. Everything else keeps Lance's default level.
LANCE_LOG_DEFAULT = "warn,lance::index::vector::builder=error"


def import_lancedb() -> types.ModuleType:
    """``lancedb``, imported once per process without the parts it does not need here."""
    module = sys.modules.get("lancedb")
    if module is not None:
        return module
    # Read once, when Lance's native library starts: a user's own LANCE_LOG wins.
    os.environ.setdefault("LANCE_LOG", LANCE_LOG_DEFAULT)
    try:
        _defer_namespace_packages()
        _defer_lancedb_extras()
    except (ImportError, ValueError):  # an unexpected layout: the plain import
        _forget_deferred_extras()
    finder = _PandasHidden() if _hide_pandas and "pandas" not in sys.modules else None
    if finder is not None:
        sys.meta_path.insert(0, finder)
    try:
        with _marked_overrides():
            import lancedb

        for name, _, _ in _EXTRAS:  # the parent's attribute, as an import sets it
            if type(sys.modules.get(name)) is _DeferredPackage:
                setattr(lancedb, name.rpartition(".")[2], sys.modules[name])
        _load_embeddings_on_lookup()
    finally:
        if finder is not None:
            sys.meta_path.remove(finder)
    return lancedb


@contextlib.contextmanager
def _marked_overrides() -> Iterator[None]:
    """While LanceDB's modules run, ``@override`` marks methods instead of checking them."""
    overrides = _overrides_module()
    checked = getattr(overrides, "override", None)
    if checked is not None:
        overrides.override = _mark_override  # type: ignore[union-attr]
    try:
        yield
    finally:
        if checked is not None:
            overrides.override = checked  # type: ignore[union-attr]


def _overrides_module() -> types.ModuleType | None:
    if sys.version_info >= (3, 12):  # LanceDB uses typing.override there
        return None
    try:
        import overrides
    except ImportError:
        return None
    return overrides
