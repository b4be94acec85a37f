"""Where the user's code is on the stack: the ``stacklevel`` of the library's warnings.

A warning points at the user's call (their ``chat()``, their cell), never at a line of
this package nor of asyncio, which runs an async call's frames: its file and line are
what a terminal, a notebook and pytest print first.
"""

from __future__ import annotations

import asyncio
import os
import sys

__all__ = ["caller_stacklevel"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # chatlas_like/
_ASYNCIO = os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep
_INSIDE = (_PACKAGE, _ASYNCIO)


def caller_stacklevel() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the function calling this) of the
    nearest frame outside this package and asyncio; the outermost one when every frame
    is inside (a worker thread's)."""
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]  # the stack: no public way
    level = 1
    last = 1
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_INSIDE):
            return level
        frame = frame.f_back
        last = level
        level += 1
    return last
