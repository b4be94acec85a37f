"""Keep the dependency floors honest: install them exactly, then use the library.

``python3 scripts/floors.py pins`` prints ``name==floor`` for the core dependencies and
the ``[demo]`` extra, read from ``pyproject.toml`` (every one must declare a ``>=``
floor). ``make floor-smoke`` installs those pins into a venv of their own and runs
``python scripts/floors.py smoke`` there: the installed versions must be the floors,
the package imports, the demo runs, and one chat makes a tool round trip through the
real SDK on the loopback server (streamed, with a tool whose argument is a pydantic
model, and structured output).
"""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("demo",)
_FLOOR = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*>=\s*([^,;\s]+)")


def floors() -> dict[str, str]:
    """``{distribution: floor}`` for the core dependencies and :data:`EXTRAS`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    found: dict[str, str] = {}
    for requirement in requirements:
        match = _FLOOR.match(requirement)
        if match is None:
            raise SystemExit(f"pyproject.toml: {requirement!r} declares no >= floor")
        found[match.group(1).lower()] = match.group(2)
    return found


def pins() -> int:
    for name, version in floors().items():
        print(f"{name}=={version}")
    return 0


def _release(version: str) -> tuple[int, ...]:
    """``"2.0"`` and ``"2.0.0"`` alike: the release numbers without trailing zeros."""
    numbers = [int(part) for part in version.split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def _installed_versions_are_the_floors() -> None:
    from importlib.metadata import version

    wrong = {
        n: version(n) for n, floor in floors().items() if _release(version(n)) != _release(floor)
    }
    assert not wrong, f"installed above the floor: {wrong}"


def _demo_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Midwest" in done.stdout and "DataFrame" in done.stdout, done.stdout


def _a_tool_round_trips() -> None:
    from pydantic import BaseModel

    from chatlas_like import ChatAnthropic
    from chatlas_like.testing import LoopbackServer, Reply, ScriptedModel

    class Order(BaseModel):
        item: str
        quantity: int

    class Total(BaseModel):
        total: int

    # No `from __future__ import annotations` in this file: the hint must be the class.
    def price(order: Order) -> int:
        """The price of an order, in cents."""
        return 250 * order["quantity"]  # validated, then a dict, as chatlas passes it

    script = ScriptedModel(
        [
            Reply.tool_call("price", {"order": {"item": "tea", "quantity": 3}}),
            Reply.text("Three teas cost **$7.50**."),
            Reply.text('{"total": 750}'),
        ]
    )
    with LoopbackServer(script) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="floor-smoke", model="claude-haiku-4-5")
        chat.register_tool(price)
        answer = "".join(chat.stream("What do three teas cost?"))
        total = chat.chat_structured("And in cents?", data_model=Total)
    assert "$7.50" in answer, answer
    result = chat.get_turns()[2].tool_results[0]
    assert result.outcome == "success" and result.value == 750, result
    assert total.total == 750, total


def smoke() -> int:
    import chatlas_like

    _installed_versions_are_the_floors()
    _demo_runs()
    _a_tool_round_trips()
    shown = ", ".join(f"{n} {v}" for n, v in floors().items())
    print(f"floor smoke passed (chatlas_like {chatlas_like.__version__} on {shown})")
    return 0


if __name__ == "__main__":
    commands = {"pins": pins, "smoke": smoke}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        raise SystemExit("usage: floors.py pins | smoke")
    sys.exit(commands[sys.argv[1]]())
