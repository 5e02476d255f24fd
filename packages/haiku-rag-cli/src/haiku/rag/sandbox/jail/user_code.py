"""Running the code, in the forked child: its helpers, its capped output, its value or traceback.

The code sees ``search`` and ``list_documents`` (calls over the child's own
channel to the jail), writes through a stdout passed on as written and cut at
``max_output_chars``, and ends with a ``done`` message: the last expression's
value or the traceback of what it raised, each cut at the same bound.
"""

from __future__ import annotations

import ast
import io
import sys
import traceback

from channel import Channel


class _CappedWriter(io.TextIOBase):
    """stdout for the code: passes the first ``limit`` characters to ``sink`` as written, counts the rest.

    Sent as written, so what the code printed before it was stopped (a timeout) still reaches haiku.
    """

    def __init__(self, limit: int, sink) -> None:
        self.limit = limit
        self.sink = sink
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - self.kept
        if room > 0 and text:
            piece = text[:room]
            self.sink(piece)
            self.kept += len(piece)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)


def run_code(code: str, channel: Channel, max_chars: int) -> dict:
    """Run ``code`` with the helpers bound; the ``done`` message to send back."""
    out = _CappedWriter(max_chars, lambda text: channel.send({"op": "out", "text": text}))

    def search(query: str, limit: int = 10) -> list[dict]:
        """Search the selected databases; each hit names its ``source``."""
        return channel.call("search", query=query, limit=limit)

    def list_documents() -> list[dict]:
        """Every mounted document's metadata with its ``source``."""
        return channel.call("list_documents")

    namespace = {"__name__": "__main__", "search": search, "list_documents": list_documents}
    sys.stdout = out
    sys.stderr = out
    sys.stdin = io.StringIO("")
    value_text = None
    value_dropped = 0
    error = None
    try:
        tree = ast.parse(code, filename="<sandbox>", mode="exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<sandbox>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<sandbox>", "eval"), namespace)
            if value is not None:
                # Capped here: a huge value must not overflow the control channel's line.
                value_text = repr(value)
                value_dropped = max(0, len(value_text) - max_chars)
                value_text = value_text[:max_chars]
    except BaseException as exc:  # the code's failure is the tool's answer, SystemExit included
        frames = traceback.extract_tb(exc.__traceback__)
        user_frames = [f for f in frames if f.filename == "<sandbox>"]
        lines = traceback.format_list(user_frames) if user_frames else []
        error = "Traceback (most recent call last):\n" + "".join(lines)
        error += "".join(traceback.format_exception_only(type(exc), exc))
        error = error[:max_chars]  # an exception's text may be as huge as a value
    finally:
        sys.stdout = sys.__stdout__
        sys.stderr = sys.__stderr__
    return {"op": "done", "dropped": out.dropped + value_dropped, "value": value_text, "error": error}
