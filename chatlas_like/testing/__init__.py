"""Test your tools and apps offline: a loopback Anthropic-protocol server and a scripted model.

A real HTTP server on 127.0.0.1 that the real ``anthropic`` SDK talks to, answering
from a script (:class:`ScriptedModel`, :class:`Reply`) or by replaying a recorded
exchange (:class:`CassetteReplay`), checking each request against the API's rules, and
logging every request::

    from chatlas_like import ChatAnthropic
    from chatlas_like.testing import LoopbackServer, Reply

    with LoopbackServer([Reply.tool_call("get_date", {}), Reply.text("2024-01-01")]) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="test")
        chat.register_tool(get_date)
        assert "2024" in str(chat.chat("What's the date?", echo="none"))
        assert server.message_requests()[1]["messages"][-1]["content"][0]["type"] == "tool_result"

And a provider that needs no HTTP at all, :class:`ScriptedProvider`, written against
the provider interface alone (``Chat(ScriptedProvider([...]))``).
"""

from ._billing import BilledRequest, PromptCacheMeter
from ._cassette import CassetteReplay, comparable, default_fixtures_dir
from ._postgres import TemporaryPostgres
from ._provider import ScriptedProvider, ScriptedRequest
from ._scripted import Reply, Response, ScriptedModel
from ._server import Backend, LoopbackServer, RecordedRequest
from ._validator import RULES, Rejection, validate_request

__all__ = [
    "RULES",
    "Backend",
    "BilledRequest",
    "CassetteReplay",
    "LoopbackServer",
    "PromptCacheMeter",
    "RecordedRequest",
    "Rejection",
    "Reply",
    "Response",
    "ScriptedModel",
    "ScriptedProvider",
    "ScriptedRequest",
    "TemporaryPostgres",
    "comparable",
    "default_fixtures_dir",
    "validate_request",
]
