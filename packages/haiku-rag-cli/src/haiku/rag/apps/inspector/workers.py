"""How the inspector reads: one Textual worker per kind of read, the latest call winning."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.css.query import NoMatches


def read_worker(group: str) -> Callable[[Callable[..., Awaitable[None]]], Callable[..., Any]]:
    """A worker in ``group`` (a new call cancels the one running): a read, then its panes updated.

    A read can end while the app closes (q pressed, the connection gone), when
    its panes are no longer there to update: it then stops quietly.
    """

    def wrap(method: Callable[..., Awaitable[None]]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def body(self: Any, *args: Any) -> None:
            try:
                await method(self, *args)
            except NoMatches:
                return

        return work(exclusive=True, group=group)(body)

    return wrap
