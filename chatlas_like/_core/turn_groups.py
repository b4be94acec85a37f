"""Views of a history that group turns differently, without changing the history."""

from __future__ import annotations

from collections.abc import Sequence

from .tool_result import ContentToolResult
from .turn import AssistantTurn, Turn

__all__ = ["tool_results_on_assistant_turns"]


def tool_results_on_assistant_turns(turns: Sequence[Turn]) -> list[Turn]:
    """``turns`` with each tool-results-only turn given to the assistant and merged
    into the assistant turns around it, so a tool loop reads as one assistant turn
    (chatlas's ``get_turns(tool_result_role="assistant")``, handy for displays)."""
    grouped: list[Turn] = []
    for turn in turns:
        if turn.contents and all(isinstance(c, ContentToolResult) for c in turn.contents):
            turn = AssistantTurn(turn.contents)
        if grouped and grouped[-1].role == turn.role == "assistant":
            previous = grouped[-1]
            grouped[-1] = previous.copy_with([*previous.contents, *turn.contents])
        else:
            grouped.append(turn)
    return grouped
