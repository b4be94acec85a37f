"""A queued turn's handle, and resuming the turns a dead worker left unfinished."""

from __future__ import annotations

from typing import Any

from ._codec import decode_error
from ._engine import DurableError, in_thread
from ._history import TurnOutput, off_loop
from ._ids import turn_index, workflow_name

__all__ = ["DurableHandle", "recover_executor"]

_TURN_PREFIX = workflow_name("")


class DurableHandle:
    """A turn put on a queue by :meth:`DurableChat.enqueue`.

    Attributes
    ----------
    workflow_id
        The turn's DBOS workflow id.
    conversation_id
        Its conversation.
    index
        Its number in the conversation (0 for the first turn).
    """

    def __init__(
        self,
        workflow_id: str,
        conversation_id: str,
        poll_interval: float,
        *,
        recorded: bool = False,
    ) -> None:
        self.workflow_id = workflow_id
        self.conversation_id = conversation_id
        self.index = turn_index(workflow_id)
        self._poll = poll_interval
        # Known to be recorded (enqueue just wrote it): result() need not look first.
        self._recorded = recorded

    def __repr__(self) -> str:
        return f"<DurableHandle {self.workflow_id!r}>"

    def status(self) -> str:
        """DBOS's status of the turn: ``ENQUEUED``, ``PENDING``, ``SUCCESS``..."""
        from dbos import DBOS

        status = off_loop(lambda: DBOS.get_workflow_status(self.workflow_id))
        if status is None:
            raise DurableError(f"no turn {self.workflow_id!r} is recorded")
        return status.status

    def result(self) -> str:
        """Wait for the turn; the answer's text (or the error the turn ended with)."""
        from dbos import DBOS

        def wait() -> Any:
            handle: Any = DBOS.retrieve_workflow(  # pyright: ignore[reportUnknownVariableType]
                self.workflow_id, existing_workflow=not self._recorded
            )
            return handle.get_result(polling_interval_sec=self._poll)

        output = TurnOutput.from_data(off_loop(wait))
        if output is None:
            raise DurableError(f"turn {self.workflow_id!r} recorded no answer")
        if output.error is not None:
            raise decode_error(output.error)
        return output.answer

    async def result_async(self) -> str:
        """The async :meth:`result`."""
        return await in_thread(self.result)


def recover_executor(executor_id: str) -> list[str]:
    """Resume the durable turns a dead process left unfinished; their workflow ids.

    DBOS recovers a process's unfinished workflows when a process with the same
    executor id launches. When that process will not come back (a worker scaled
    away), call this from any live process, with the dead one's executor id: its
    turns go back on their queue (or DBOS's internal one) for any worker to finish.
    Call it only for an executor that is surely dead: a live one would run the turns
    twice at once.
    """
    from dbos import DBOS

    def resume() -> list[str]:
        resumed: list[str] = []
        for status in DBOS.list_workflows(
            status="PENDING", executor_id=executor_id, load_input=False, load_output=False
        ):
            if status.name.startswith(_TURN_PREFIX):
                DBOS.resume_workflow(status.workflow_id, queue_name=status.queue_name)
                resumed.append(status.workflow_id)
        return resumed

    return off_loop(resume)
