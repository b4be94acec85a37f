"""chatlas's public names that chatlas_like deliberately does not have, and what to use.

``from chatlas_like import ChatOpenAI`` (or ``chatlas_like.ChatOpenAI``) raises
:class:`NotInChatlasLikeError` saying so. It is an ``ImportError``, so that the message
survives ``from ... import`` (Python replaces an ``AttributeError`` raised there with its
own "cannot import name" message); ``hasattr()`` on these names raises it too.
"""

from __future__ import annotations

from ._core.errors import ChatlasLikeError

__all__ = ["NOT_HERE", "NotInChatlasLikeError", "not_here"]

_ONLY_ANTHROPIC = (
    "chatlas_like talks to Anthropic's Messages API (ChatAnthropic), OpenAI's APIs "
    "(ChatOpenAI, ChatOpenAICompletions) and the servers speaking Chat Completions "
    "(ChatOllama, ChatGroq...): use one of those, or ChatOpenAICompletions(base_url=...) "
    "for a gateway that speaks OpenAI's API"
)
_OTHER_PROVIDERS = {
    "ChatBedrock": "AWS Bedrock",
    "ChatGithub": "GitHub Models",
    "ChatGoogle": "Google Gemini",
    "ChatPosit": "Posit AI",
    "ChatSnowflake": "Snowflake Cortex",
    "ChatVertex": "Google Vertex AI",
}

NOT_HERE: dict[str, str] = {
    **{
        name: f"{name} is chatlas's {where} provider; {_ONLY_ANTHROPIC}"
        for name, where in _OTHER_PROVIDERS.items()
    },
    "ChatAuto": (
        f"ChatAuto picks one of chatlas's providers from a string; {_ONLY_ANTHROPIC} "
        "(the model name can come from your own setting)"
    ),
}


class NotInChatlasLikeError(ChatlasLikeError, ImportError):
    """A chatlas name that chatlas_like deliberately does not have; the message says
    what to use instead."""


def not_here(name: str) -> NotInChatlasLikeError | None:
    """The error for a chatlas name that is not here, or None for any other name."""
    hint = NOT_HERE.get(name)
    if hint is None:
        return None
    return NotInChatlasLikeError(hint, name=name)
