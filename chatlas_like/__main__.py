"""The command line: ``python -m chatlas_like demo | chat | serve-results``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # Whoever read our output has gone (`| head -1`): end quietly, as shell tools
        # do. What is still buffered for stdout goes nowhere, not into a second error
        # when the interpreter flushes it at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chatlas_like")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="a tool-calling conversation (scripted model offline)")
    demo.add_argument("--live", action="store_true", help="ask Claude (needs ANTHROPIC_API_KEY)")
    demo.add_argument("--model", default=None, help="the Claude model for --live")
    results = commands.add_parser(
        "serve-results", help="serve stored tool results over HTTP, per tenant"
    )
    results.add_argument("--db", required=True, help="store URL or SQLite file path")
    results.add_argument("--keys", required=True, help='JSON file {"KEY": "tenantId"}')
    results.add_argument("--host", default="127.0.0.1", help="address to listen on")
    results.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    results.add_argument(
        "--max-response-bytes",
        type=int,
        default=16 * 1024 * 1024,
        help="cap on a listing's response size (records with bodies)",
    )
    chat = commands.add_parser("chat", help="an interactive chat in the terminal")
    chat.add_argument("--offline", action="store_true", help="talk to the scripted model")
    chat.add_argument("--model", default=None, help="the Claude model")
    chat.add_argument("--system-prompt", default=None, help="the system prompt")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._cli.demo import run_demo

        return run_demo(live=args.live, model=args.model)
    if args.command == "serve-results":
        from ._cli.serve_results import serve

        return serve(
            args.db,
            args.keys,
            host=args.host,
            port=args.port,
            max_response_bytes=args.max_response_bytes,
        )

    if args.command == "chat":
        from ._cli.chat_command import run_chat_command

        return run_chat_command(
            offline=args.offline, model=args.model, system_prompt=args.system_prompt
        )
    parser.error(f"unknown command {args.command}")  # pragma: no cover
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
