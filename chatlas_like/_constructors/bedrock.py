"""chatlas's ``ChatBedrockAnthropic``: Claude on AWS Bedrock, through the ``anthropic``
SDK's own Bedrock client (the Messages API, as ``ChatAnthropic``)."""

from __future__ import annotations

from typing import Any, Literal

from .._chat import Chat
from .._chat_anthropic import reasoning_kwargs
from ..providers._anthropic.provider import AnthropicBedrockProvider
from ..providers._anthropic.schema import StructuredMode

__all__ = ["ChatBedrockAnthropic"]

DEFAULT_MODEL = "us.anthropic.claude-sonnet-5"  # chatlas 0.23.0's default


def ChatBedrockAnthropic(
    *,
    model: str | None = None,
    max_tokens: int = 4096,
    reasoning: int | dict[str, Any] | None = None,
    cache: Literal["5m", "none"] = "5m",
    structured_output_mode: StructuredMode = "auto",
    aws_secret_key: str | None = None,
    aws_access_key: str | None = None,
    aws_region: str | None = None,
    aws_profile: str | None = None,
    aws_session_token: str | None = None,
    base_url: str | None = None,
    system_prompt: str | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with Claude on AWS Bedrock (needs ``pip install 'anthropic[bedrock]'``).

    Parameters
    ----------
    model
        The Bedrock model id; ``"us.anthropic.claude-sonnet-5"`` by default, as in chatlas.
    max_tokens, cache, structured_output_mode, system_prompt
        As for :func:`~chatlas_like.ChatAnthropic`.
    reasoning
        Extended thinking: a token budget, or the API's ``thinking`` object.
    aws_secret_key, aws_access_key, aws_region, aws_profile, aws_session_token
        AWS credentials; the AWS environment's (``AWS_REGION``, ``AWS_PROFILE``...)
        when None. Never saved with a chat.
    base_url
        Another endpoint (``ANTHROPIC_BEDROCK_BASE_URL``, or Bedrock's for the region).
    kwargs
        Extra arguments for the SDK's Bedrock client.
    **options
        Chat options (see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    aws = {
        "aws_secret_key": aws_secret_key,
        "aws_access_key": aws_access_key,
        "aws_region": aws_region,
        "aws_profile": aws_profile,
        "aws_session_token": aws_session_token,
    }
    provider = AnthropicBedrockProvider(
        aws=aws,
        model=model or DEFAULT_MODEL,
        max_tokens=max_tokens,
        base_url=base_url,
        cache=cache,
        client_kwargs=kwargs,
        reasoning=reasoning,
        structured_output_mode=structured_output_mode,
    )
    return Chat(
        provider, system_prompt=system_prompt, kwargs_chat=reasoning_kwargs(provider), **options
    )
