"""Global options after the command: `haiku-rag search bread --db-name cooking`.

haiku-ingester takes `--db-name` after its command, so the habit carries over.
Click only reads a group's options before the command name; this group moves
the global ones it finds after it (up to a `--`) in front of it, so both
orders mean the same. No command defines an option of the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typer.core import TyperGroup

from haiku.rag.cli._unknown_commands import unknown_command_message

# Global options taking a value, and global flags, as the root callback declares them.
VALUE_OPTIONS = ("--db-name", "--database", "--config", "-c", "--log-level", "--log-format")
FLAG_OPTIONS = ("--read-only", "--quiet", "-q")


def _takes_value(arg: str) -> bool:
    return arg in VALUE_OPTIONS


def _is_global(arg: str) -> bool:
    return _takes_value(arg) or arg in FLAG_OPTIONS or any(arg.startswith(f"{o}=") for o in VALUE_OPTIONS if o[1] == "-")


def hoist_global_options(args: Sequence[str]) -> list[str]:
    """``args`` with the global options written after the command moved before it."""
    args = list(args)
    start = 0
    while start < len(args) and args[start].startswith("-") and args[start] != "--":
        start += 2 if _takes_value(args[start]) else 1
    if start >= len(args) or args[start] == "--":
        return args
    moved: list[str] = []
    rest: list[str] = []
    i = start
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if _is_global(arg):
            # A value option at the very end moves alone: click then says it needs a value.
            width = 2 if _takes_value(arg) else 1
            moved += args[i : i + width]
            i += width
            continue
        rest.append(arg)
        i += 1
    return args[:start] + moved + rest


GLOBAL_OPTIONS_EPILOG = (
    "Global options, before or after the command: --db-name NAME (one configured database), "
    "-c/--config PATH, --read-only, --log-level LEVEL, --log-format console|json, -q/--quiet. "
    "See haiku-rag --help."
)


def _with_epilog(command: Any) -> None:
    """Every command's help names the global options, which its own option list leaves out."""
    if not getattr(command, "epilog", None):
        command.epilog = GLOBAL_OPTIONS_EPILOG
    for child in getattr(command, "commands", {}).values():
        _with_epilog(child)


class GlobalOptionsAnywhere(TyperGroup):
    """The `haiku-rag` group: global options anywhere, named in every command's help, and
    unknown commands explained."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            _with_epilog(command)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(args))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(unknown_command_message(name, list(self.commands)))
        return super().resolve_command(ctx, args)
