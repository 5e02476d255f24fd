"""What a reload may change, and what it changes (docs/ingester.md).

Among what the ingester uses, only ``lancedb.databases`` and
``ingester.databases`` may differ from the running configuration;
``ingester.http`` may differ too, and is kept as it runs until a restart (the
endpoint's port and token are bound at start, docs/operations.md); any other
difference there is refused, naming the sections, because applying it needs a
restart (the queue, the workers, the embedder and every open database depend
on them). What only haiku-rag reads (``UNUSED``) is taken without a word of
refusal: analysts and the daemon share one file, and a tweak to search
settings must not block the next database change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from haiku.core.config import AppConfig
from haiku.ingester.checks import ingested_refs, location_identity
from haiku.ingester.errors import ReloadRefusedError

_RELOADABLE = {("lancedb", "databases"), ("ingester", "databases")}
_KEPT = {("ingester", "http")}  # not applied by a reload, not refusing one either: a restart applies it
# Read by haiku-rag only. search.vector_index_metric is not among them: the
# ingester's writes rebuild the vector index with it.
UNUSED = ("reranking", "qa", "sandbox", "search")
_USED_IN_UNUSED = {("search", "vector_index_metric")}
_BY_KEY = ("lancedb", "ingester", "search")  # sections whose keys are judged one by one


def _changes(old: AppConfig, new: AppConfig) -> list[str]:
    """Dotted names of what differs, outside the two reloadable maps."""
    changed: list[str] = []
    old_dump, new_dump = old.model_dump(mode="json"), new.model_dump(mode="json")
    for section in old_dump.keys() | new_dump.keys():
        before, after = old_dump.get(section), new_dump.get(section)
        if section in _BY_KEY and isinstance(before, dict) and isinstance(after, dict):
            for key in before.keys() | after.keys():
                if (section, key) not in _RELOADABLE | _KEPT and before.get(key) != after.get(key):
                    changed.append(f"{section}.{key}")
        elif before != after:
            changed.append(section)
    return sorted(changed)


def _unused(change: str) -> bool:
    section, _, key = change.partition(".")
    return section in UNUSED and (section, key) not in _USED_IN_UNUSED


def changed_sections(old: AppConfig, new: AppConfig) -> list[str]:
    """What differs that the ingester uses, outside the two reloadable maps: needs a restart."""
    return [change for change in _changes(old, new) if not _unused(change)]


def unused_changes(old: AppConfig, new: AppConfig) -> list[str]:
    """What differs that only haiku-rag reads: a reload takes it as it is."""
    return [change for change in _changes(old, new) if _unused(change)]


@dataclass
class ReloadPlan:
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)  # changed, read by haiku-rag only
    http_changed: bool = False  # ingester.http differs: kept as it runs until a restart

    @property
    def empty(self) -> bool:
        return not self.removed and not self.added


def _signature(config: AppConfig, name: str) -> tuple:
    ref = ingested_refs(config, [name])[name]
    sources = [s.model_dump(mode="json") for s in config.ingester.databases[name].sources]
    return (location_identity(ref), ref.tag, sources)


def plan_reload(old: AppConfig, new: AppConfig, serving: list[str]) -> ReloadPlan:
    """Raises ReloadRefusedError for a change outside the two maps; else which databases go and come.

    A database is changed when its location identity, tag or source list changed:
    it is removed and added again.
    """
    sections = changed_sections(old, new)
    if sections:
        raise ReloadRefusedError(
            f"the reload changes {', '.join(sections)}, which only a restart applies; "
            "only lancedb.databases and ingester.databases reload. Restart haiku-ingester to apply it "
            "(nothing was changed)"
        )
    plan = ReloadPlan(unused=unused_changes(old, new), http_changed=old.ingester.http != new.ingester.http)
    wanted = list(new.ingester.databases)
    for name in serving:
        if name not in new.ingester.databases or _signature(old, name) != _signature(new, name):
            plan.removed.append(name)
    for name in wanted:
        if name not in serving or name in plan.removed:
            plan.added.append(name)
    return plan
