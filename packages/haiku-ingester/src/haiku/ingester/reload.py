"""What a reload may change, and what it changes (SPEC §14.6).

Only ``lancedb.databases`` and ``ingester.databases`` may differ from the
running configuration; any other difference is refused, naming the sections,
because applying it needs a restart (the queue, the workers, the embedder and
every open database depend on them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from haiku.core.config import AppConfig
from haiku.ingester.checks import ingested_refs, location_identity
from haiku.ingester.errors import ReloadRefusedError

_RELOADABLE = {("lancedb", "databases"), ("ingester", "databases")}


def changed_sections(old: AppConfig, new: AppConfig) -> list[str]:
    """Dotted names of the sections that differ, outside the two reloadable maps."""
    changed: list[str] = []
    old_dump, new_dump = old.model_dump(mode="json"), new.model_dump(mode="json")
    for section in old_dump.keys() | new_dump.keys():
        before, after = old_dump.get(section), new_dump.get(section)
        if section in ("lancedb", "ingester") and isinstance(before, dict) and isinstance(after, dict):
            for key in before.keys() | after.keys():
                if (section, key) not in _RELOADABLE and before.get(key) != after.get(key):
                    changed.append(f"{section}.{key}")
        elif before != after:
            changed.append(section)
    return sorted(changed)


@dataclass
class ReloadPlan:
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

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
    plan = ReloadPlan()
    wanted = list(new.ingester.databases)
    for name in serving:
        if name not in new.ingester.databases or _signature(old, name) != _signature(new, name):
            plan.removed.append(name)
    for name in wanted:
        if name not in serving or name in plan.removed:
            plan.added.append(name)
    return plan
