"""How the inspector reads: one Textual worker per kind of read, the latest call winning.

A read, or a highlight a read's results caused, can be handled while the app
closes (q pressed, the connection gone), when the panes it would update are no
longer there: it then stops quietly (``read_worker``, ``unless_closing``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.css.query import NoMatches


def unless_closing(handler: Callable[..., None]) -> Callable[..., None]:
    """An event handler that updates panes, doing nothing once they are gone."""

    @functools.wraps(handler)
    def body(self: Any, *args: Any) -> None:
        try:
            handler(self, *args)
        except NoMatches:
            return

    return body


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
