"""A value for "not given", where None already means something (reset to the default)."""

from __future__ import annotations

from typing import Final

__all__ = ["MISSING", "MISSING_TYPE"]


class MISSING_TYPE:
    """The type of :data:`MISSING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = MISSING_TYPE()
"""An argument that was not given."""
