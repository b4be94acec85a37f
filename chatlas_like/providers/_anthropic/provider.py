"""The Anthropic provider, and the only module that imports the SDK.

The SDK is imported on the first request, not with the package. Requests go through the
SDK's client (authentication, headers, connection pool, timeouts, status errors); its
own retries are off (``max_retries=0``) because the chat retries in one place (see
:mod:`chatlas_like._run.retry`). The response body is read as raw server-sent events and
decoded here, so streamed and non-streamed answers feed the same accumulator. SDK and
transport errors become :mod:`chatlas_like._core.errors` exceptions in ``translate_error``.
``ChatAnthropic()``, which builds a chat around this provider, is in ``_chat_anthropic``:
a provider never imports the chat.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import (
    AsyncIterator,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractContextManager
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import orjson

from ..._core.content import ContentUploaded
from ..._core.errors import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
)
from ..._core.redact import redact, redact_loggers, remember_secret
from ..._core.turn import Turn
from .._base import Provider
from .._prices import get_token_price
from .._sdk import (
    AsyncEvents,
    Events,
    LoopClients,
    SyncClient,
    bridged,
    raised_as_ours,
    retry_after,
    split_http_client,
)
from .._sse import parse_sse_async
from .._types import (
    BatchAnswer,
    BatchStatus,
    Capabilities,
    FileMetadata,
    FileSource,
    ModelInfo,
    RequestSpec,
    TokenPrice,
)
from .prices import ANTHROPIC_PRICES
from .schema import StructuredMode
from .wire import (
    PROVIDER_NAME,
    AnthropicAccumulator,
    MessageCache,
    build_request,
    document_urls,
    message_data,
    message_events,
    parse_sse,
    stream_error,
    structured_mode,
)

if TYPE_CHECKING:
    from ..._core.content import ContentUploaded

__all__ = [
    "BEDROCK_INSTALL",
    "NO_PREFILL_MODELS",
    "AnthropicBedrockProvider",
    "AnthropicProvider",
    "sdk_errors",
    "sdk_message",
    "translate_error",
]

DEFAULT_MODEL = "claude-sonnet-5"  # chatlas's default; sonnet-4-5 is deprecated in the SDK
# Models that reject a conversation ending with an assistant message (a prefill).
NO_PREFILL_MODELS = (
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-sonnet-4-6",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5",
    "claude-fable",
    "claude-mythos",
)
CONTEXT_WINDOW = 200_000
CacheTTL = Literal["5m", "1h", "none"]
ReasoningEffort = Literal["low", "medium", "high", "xhigh", "max"]
# What set_model_params can set here; the rest (seed, penalties...) Anthropic has not.
MODEL_PARAMS = frozenset({"temperature", "top_p", "top_k", "max_tokens", "stop_sequences"})

_STATUS_ERRORS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    413: RequestTooLargeError,
    429: RateLimitError,
    529: OverloadedError,
}


class AnthropicProvider(Provider):
    """Anthropic's Messages API through the official SDK.

    Parameters
    ----------
    model
        The model id, e.g. ``"claude-haiku-4-5"``.
    max_tokens
        The most tokens one answer may use.
    api_key
        The API key; ``ANTHROPIC_API_KEY`` when None.
    base_url
        Another endpoint (a proxy, the loopback test server); ``ANTHROPIC_BASE_URL``
        or Anthropic's when None.
    cache
        Prompt caching of the system prompt and conversation: ``"5m"``, ``"1h"`` or
        ``"none"``.
    client_kwargs
        Extra arguments for the SDK client (``timeout``, ``default_headers``...).
    prefill
        Whether the model accepts a conversation ending with an assistant message;
        None decides by model (see ``NO_PREFILL_MODELS``).
    reasoning
        Extended thinking: a token budget (int), an effort (``"low"`` ... ``"max"``,
        adaptive thinking), or the API's ``thinking`` object as a dict.
    structured_output_mode
        How structured data is asked for: ``"auto"`` (structured outputs where the
        model has them, a forced tool otherwise), ``"native"`` or ``"tool"``.
    """

    name = PROVIDER_NAME  # "Anthropic", as in chatlas; ``key`` is "anthropic"
    label = PROVIDER_NAME
    capabilities = Capabilities(batches=True, paused_finish_reasons=frozenset({"pause_turn"}))
    prices: ClassVar[Mapping[str, TokenPrice]] = ANTHROPIC_PRICES
    sdk_loggers: ClassVar[tuple[str, ...]] = ("anthropic", "httpx2")
    saved_fields: ClassVar[Mapping[str, str]] = {
        "model": "str",
        "max_tokens": "int",
        "cache": "Literal['5m', '1h', 'none']",
        "prefill": "bool | None",
        "structured_output_mode": "Literal['auto', 'native', 'tool']",
        "reasoning": "int | str | dict[str, Any] | None",
    }

    def __init__(
        self,
        *,
        model: str,
        max_tokens: int = 4096,
        api_key: str | None = None,
        base_url: str | None = None,
        cache: CacheTTL = "5m",
        client_kwargs: dict[str, Any] | None = None,
        prefill: bool | None = None,
        reasoning: int | str | dict[str, Any] | None = None,
        structured_output_mode: StructuredMode = "auto",
    ) -> None:
        if cache not in ("5m", "1h", "none"):
            raise ValueError(f"cache must be '5m', '1h' or 'none', got {cache!r}")
        if structured_output_mode not in ("auto", "native", "tool"):
            raise ValueError(
                "structured_output_mode must be 'auto', 'native' or 'tool', "
                f"got {structured_output_mode!r}"
            )
        self.model = model
        self.max_tokens = max_tokens
        self.base_url = base_url
        self.cache: CacheTTL = cache
        self.prefill = prefill
        self.thinking, self.effort = thinking_config(reasoning, max_tokens)
        self.structured_output_mode: StructuredMode = structured_output_mode
        self._api_key = api_key
        self._client_kwargs = dict(client_kwargs or {})
        self._sync_kwargs, self._async_kwargs = split_http_client(self._client_kwargs)
        self._client = SyncClient()
        weakref.finalize(self, self._client.close)  # its pool closes with the provider
        self._messages = MessageCache()
        self._async_clients = LoopClients(self._new_async_client)

        if "http_client" in self._client_kwargs:
            self._check_http_client()

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r})"

    def _check_http_client(self) -> None:
        """Build the SDK client a given ``http_client`` is for, now: one the SDK refuses
        (a legacy ``httpx`` client) raises its ``TypeError`` here, as in chatlas, not at
        the first request. The client built is dropped (the caller's stays open)."""
        import anthropic

        api_key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
        if "http_client" in self._sync_kwargs:
            anthropic.Anthropic(**self._sdk_args(self._sync_kwargs, api_key))
        if "http_client" in self._async_kwargs:
            anthropic.AsyncAnthropic(**self._sdk_args(self._async_kwargs, api_key))

    # -- pure ------------------------------------------------------------------------------

    def supported_model_params(self) -> set[str]:
        """The parameters ``Chat.set_model_params()`` takes for this provider, as chatlas
        names them."""
        return set(MODEL_PARAMS)

    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        return build_request(
            turns,
            spec,
            model=self.model,
            max_tokens=self.max_tokens,
            cache=self.cache,
            thinking=self.thinking,
            effort=self.effort,
            structured=self.structured_output_mode,
            message_cache=self._messages,
        )

    def accumulator(self, spec: RequestSpec | None = None) -> AnthropicAccumulator:
        structured = None
        if spec is not None and spec.data_model is not None:
            structured = structured_mode(self.model, self.structured_output_mode, spec.data_model)
        return AnthropicAccumulator(
            structured,
            # A cache write costs 2x input for the 1-hour cache, 1.25x for the 5-minute one.
            cache_write_multiplier=2.0 if self.cache == "1h" else 1.25,
            completion_factory=sdk_message,
        )

    def saved_settings(self) -> dict[str, Any]:
        """Model, max_tokens, cache, prefill, structured output mode and thinking: what a
        saved chat keeps (``reasoning`` as the value that rebuilds the thinking settings)."""
        settings: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "cache": self.cache,
            "prefill": self.prefill,
            "structured_output_mode": self.structured_output_mode,
        }
        if self.effort is not None:
            settings["reasoning"] = self.effort
        elif self.thinking is not None:
            settings["reasoning"] = dict(self.thinking)
        return settings

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> AnthropicProvider:
        return cls(api_key=api_key, base_url=base_url, **settings)

    def warm_up(self) -> None:
        self._sync_client()

    def downloads(self, turns: Sequence[Turn]) -> list[str]:
        """The text documents given by URL: Anthropic fetches only PDFs itself."""
        return document_urls(self._messages.unseen(turns))  # the rest were sent already

    def context_window(self) -> int | None:
        """200,000 tokens: every current Claude model's standard window."""
        return CONTEXT_WINDOW

    def supports_prefill(self) -> bool:
        """Whether the model accepts a conversation ending with an assistant message."""
        if self.prefill is not None:
            return self.prefill
        return not self.model.startswith(NO_PREFILL_MODELS)

    # -- send ------------------------------------------------------------------------------

    def open(self, body: dict[str, Any]) -> Events:
        client = self._sync_client()
        with sdk_errors():
            manager = client.messages.with_streaming_response.create(**_sdk_arguments(body))
            response = manager.__enter__()
        if body.get("stream"):
            source: Iterator[dict[str, Any]] = parse_sse(response.iter_bytes())
        else:
            source = _replayed(response.read)
        return Events(_translating(source, response), lambda: manager.__exit__(None, None, None))

    async def open_async(self, body: dict[str, Any]) -> AsyncEvents:
        client = await self._async_client()
        with sdk_errors():
            manager = client.messages.with_streaming_response.create(**_sdk_arguments(body))
            response = await manager.__aenter__()

        async def close() -> None:
            await manager.__aexit__(None, None, None)

        if body.get("stream"):
            source: AsyncIterator[dict[str, Any]] = parse_sse_async(response.iter_bytes())
        else:
            source = _replayed_async(response.read)
        return AsyncEvents(_translating_async(source, response), close)

    def list_models(self) -> list[ModelInfo]:
        """The models the API offers, newest first."""
        with sdk_errors():
            models = list(self._sync_client().models.list(limit=1000))
        infos = [self._model_info(m.id, m.display_name, m.created_at.date()) for m in models]
        infos.sort(key=lambda info: info.get("created_at", date.min), reverse=True)
        return infos

    def _model_info(self, model: str, name: str, created_at: date) -> ModelInfo:
        """A listed model, with its prices per million tokens where known (as chatlas's)."""
        price = get_token_price(model, self.key)
        return {
            "id": model,
            "name": name,
            "created_at": created_at,
            "input": price.input if price else None,
            "output": price.output if price else None,
            "cached_input": price.cached_input if price else None,
            "provider": self.key,
        }

    def count_tokens(self, body: dict[str, Any]) -> int:
        """Input tokens of the request ``body``, by the API's count endpoint."""
        names = _count_parameters()
        arguments = {k: v for k, v in body.items() if k in names}
        with sdk_errors():
            return int(self._sync_client().messages.count_tokens(**arguments).input_tokens)

    # -- files -----------------------------------------------------------------------------

    def file_upload(self, source: FileSource) -> ContentUploaded:
        """Upload ``source`` with the Files API; a reference to use as content."""

        with sdk_errors():
            meta = self._sync_client().files.upload(
                file=(source.filename, source.data, source.mime_type)
            )
        return ContentUploaded(
            id=meta.id, mime_type=meta.mime_type, provider=self.key, filename=meta.filename
        )

    def file_list(self) -> list[FileMetadata]:
        """Every file uploaded with this API key (all pages)."""
        with sdk_errors():
            return [self._file_metadata(m) for m in self._sync_client().files.list()]

    def file_get(self, file_id: str) -> FileMetadata:
        """One uploaded file's metadata."""
        with sdk_errors():
            return self._file_metadata(self._sync_client().files.retrieve_metadata(file_id))

    def file_delete(self, file_id: str) -> None:
        """Delete an uploaded file."""
        with sdk_errors():
            self._sync_client().files.delete(file_id)

    def file_download(self, file_id: str) -> bytes:
        """A file's bytes (Anthropic serves only files its tools created, not uploads)."""
        with sdk_errors():
            return self._sync_client().files.download(file_id).read()

    def _file_metadata(self, meta: Any) -> FileMetadata:
        return FileMetadata(
            id=meta.id,
            filename=meta.filename,
            mime_type=meta.mime_type,
            size_bytes=meta.size_bytes,
            created_at=meta.created_at,
            expires_at=getattr(meta, "expires_at", None),
            provider=self.key,
            extra=meta.model_dump(mode="json"),
        )

    # -- message batches (sync: a batch is polled over minutes or hours) -------------------

    def batch_submit(self, bodies: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Submit one request per ``{request id: body}``; the batch as a dict."""
        requests = [{"custom_id": key, "params": body} for key, body in bodies.items()]
        with sdk_errors():
            batch = self._sync_client().messages.batches.create(requests=requests)
            return batch.to_dict(mode="json")

    def batch_retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch's current state (``processing_status``, ``request_counts``...)."""
        with sdk_errors():
            return self._sync_client().messages.batches.retrieve(batch_id).to_dict(mode="json")

    def batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        """The results of an ended batch, in the order the API sends them."""
        with sdk_errors():
            lines = self._sync_client().messages.batches.results(batch_id)
            try:
                return [line.to_dict(mode="json") for line in lines]
            finally:
                lines.close()

    def batch_status(self, batch: Mapping[str, Any]) -> BatchStatus:
        counts: Mapping[str, Any] = batch.get("request_counts") or {}
        failed = sum(int(counts.get(k) or 0) for k in ("errored", "canceled", "expired"))
        return BatchStatus(
            id=str(batch["id"]),
            ended=batch.get("processing_status") == "ended",
            processing=int(counts.get("processing") or 0),
            succeeded=int(counts.get("succeeded") or 0),
            failed=failed,
        )

    def batch_answer(self, line: Mapping[str, Any], spec: RequestSpec) -> BatchAnswer:
        request_id = str(line.get("custom_id"))
        result: Mapping[str, Any] = line.get("result") or {}
        kind = result.get("type")
        if kind != "succeeded":
            return BatchAnswer(request_id, None, f"{kind}{_batch_error(result)}")
        accumulator = self.accumulator(spec)
        for event in message_events(result["message"]):
            accumulator.feed(event)
        return BatchAnswer(request_id, accumulator.turn())

    def _sync_client(self) -> Any:
        return self._client.get(lambda: self._make_client(False))

    def close(self) -> None:
        """Close the pooled connection of the sync client (async ones close with their loop)."""
        self._client.close()

    async def close_async(self) -> None:
        """Close the sync client's pool and the async client of the running event loop."""
        self.close()
        await self._async_clients.close_current()

    async def _async_client(self) -> Any:
        return await self._async_clients.get()

    def _new_async_client(self) -> Any:
        client = self._make_client(True)
        _create_parameters()  # reads the SDK's signature once, here too
        return client

    def _make_client(self, is_async: bool) -> Any:
        """The SDK client (the first call imports the SDK)."""
        import anthropic

        if is_async:
            return anthropic.AsyncAnthropic(**self._client_args(self._async_kwargs))
        return anthropic.Anthropic(**self._client_args(self._sync_kwargs))

    def _client_args(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        api_key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
            raise AuthenticationError(
                "No Anthropic API key: pass api_key= to ChatAnthropic or set ANTHROPIC_API_KEY. "
                "To try chatlas_like without one, run `python -m chatlas_like chat --offline`, "
                "or point base_url= at a scripted model (chatlas_like.testing.LoopbackServer)."
            )
        return self._sdk_args(kwargs, api_key)

    def _sdk_args(self, kwargs: Mapping[str, Any], api_key: str | None) -> dict[str, Any]:
        # The SDK is loaded: its loggers (and its HTTP client's) redact as ours do, the
        # key included, whoever handles their records.
        remember_secret(api_key)
        redact_loggers((*self.sdk_loggers, "httpcore2"))
        args: dict[str, Any] = {"api_key": api_key, "max_retries": 0, **kwargs}
        if self.base_url is not None:
            args["base_url"] = self.base_url
        return args


class AnthropicBedrockProvider(AnthropicProvider):
    """Claude on AWS Bedrock through the ``anthropic`` SDK's Bedrock client: the same
    Messages API as :class:`AnthropicProvider`, authenticated with AWS credentials
    (chatlas's ``AnthropicBedrockProvider``; needs ``pip install 'anthropic[bedrock]'``).

    Parameters
    ----------
    aws
        ``aws_secret_key``, ``aws_access_key``, ``aws_region``, ``aws_profile`` and
        ``aws_session_token`` for the SDK (None: the AWS environment's).
    **kwargs
        As for :class:`AnthropicProvider` (no API key: AWS signs the requests).
    """

    name = "AWS/Bedrock"
    label = "AWS/Bedrock"
    # Bedrock has no message batches, files or model list of Anthropic's.
    capabilities = Capabilities(paused_finish_reasons=frozenset({"pause_turn"}))
    saved_fields: ClassVar[Mapping[str, str]] = {
        k: v for k, v in AnthropicProvider.saved_fields.items() if k != "reasoning"
    }

    def __init__(self, *, aws: Mapping[str, str | None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._aws = {k: v for k, v in (aws or {}).items() if v is not None}

    def _make_client(self, is_async: bool) -> Any:
        import importlib.util

        # The SDK signs each request with botocore, imported only then: say so now.
        if importlib.util.find_spec("botocore") is None:
            raise ImportError(BEDROCK_INSTALL)
        from anthropic.lib.bedrock import AnthropicBedrock, AsyncAnthropicBedrock

        for secret in (self._aws.get("aws_secret_key"), self._aws.get("aws_session_token")):
            remember_secret(secret)
        redact_loggers((*self.sdk_loggers, "httpcore2", "botocore"))
        kwargs = self._async_kwargs if is_async else self._sync_kwargs
        args: dict[str, Any] = {"max_retries": 0, **self._aws, **kwargs}
        if self.base_url is not None:
            args["base_url"] = self.base_url
        return AsyncAnthropicBedrock(**args) if is_async else AnthropicBedrock(**args)

    def supports_prefill(self) -> bool:
        # A Bedrock model id is Anthropic's behind a region and vendor prefix.
        if self.prefill is not None:
            return self.prefill
        return not self.model.rpartition("anthropic.")[2].startswith(NO_PREFILL_MODELS)

    def list_models(self) -> list[ModelInfo]:
        raise self._unsupported("list its models (Bedrock lists them through boto3)")

    def count_tokens(self, body: dict[str, Any]) -> int:
        raise self._unsupported("count tokens")

    def file_upload(self, source: FileSource) -> ContentUploaded:
        raise self._unsupported("host files (Bedrock has no Files API)")

    def file_list(self) -> list[FileMetadata]:
        raise self._unsupported("host files (Bedrock has no Files API)")


BEDROCK_INSTALL = (
    "`ChatBedrockAnthropic()` requires the `anthropic` package with its Bedrock extra. "
    "Install it with `pip install anthropic[bedrock]`."
)


def status_error(event: dict[str, Any], response: Any) -> ProviderError:
    """An ``error`` event mid-stream (overloaded, mid-answer) as our provider error and,
    as the SDK raises it, an ``anthropic.APIStatusError`` too: chatlas code catching the
    SDK's class catches it as it catches an error status."""
    import anthropic

    ours = stream_error(event)
    http = response.http_response  # the SDK's wrapper holds the HTTP response
    return bridged(ours, anthropic.APIStatusError(ours.message, response=http, body=event))


def _translating(source: Iterator[dict[str, Any]], response: Any) -> Iterator[dict[str, Any]]:
    """The events, SDK errors translated and an ``error`` event raised as the SDK raises
    it (:func:`status_error`)."""
    with sdk_errors():  # entered once per response, not once per event
        for event in source:
            if event.get("type") == "error":
                raise status_error(event, response)
            yield event


async def _translating_async(
    source: AsyncIterator[dict[str, Any]], response: Any
) -> AsyncIterator[dict[str, Any]]:
    with sdk_errors():
        async for event in source:
            if event.get("type") == "error":
                raise status_error(event, response)
            yield event


def sdk_message(turn: Turn) -> Any:
    """The response ``turn`` came from, as the SDK's ``anthropic.types.Message``."""
    from anthropic.types import Message

    # The SDK's own lenient construction (as it parses responses): no validation, and
    # a block type newer than the SDK does not fail.
    return Message.model_construct(**message_data(turn))


def _batch_error(result: Mapping[str, Any]) -> str:
    outer: Mapping[str, Any] = result.get("error") or {}
    inner: Mapping[str, Any] = outer.get("error") or outer
    message = inner.get("message")
    return f" ({inner.get('type', 'error')}: {message})" if message else ""


def _replayed(read: Callable[[], bytes]) -> Iterator[dict[str, Any]]:
    yield from message_events(orjson.loads(read()))


async def _replayed_async(read: Callable[[], Any]) -> AsyncIterator[dict[str, Any]]:
    for event in message_events(orjson.loads(await read())):
        yield event


@lru_cache(maxsize=1)
def _create_parameters() -> frozenset[str]:
    import inspect

    from anthropic.resources.messages import Messages

    signature = inspect.signature(Messages.create)
    return frozenset(signature.parameters) - {"self", "extra_body"}


@lru_cache(maxsize=1)
def _count_parameters() -> frozenset[str]:
    import inspect

    from anthropic.resources.messages import Messages

    signature = inspect.signature(Messages.count_tokens)
    return frozenset(signature.parameters) - {"self", "extra_body", "extra_headers", "extra_query"}


def thinking_config(
    reasoning: int | str | dict[str, Any] | None, max_tokens: int
) -> tuple[dict[str, Any] | None, str | None]:
    """``reasoning`` as the API's ``thinking`` object and ``output_config.effort``."""
    if reasoning is None:
        return None, None
    if isinstance(reasoning, bool):
        raise TypeError("reasoning must be a token budget, an effort name or a dict, not a bool")
    if isinstance(reasoning, int):
        if not 0 < reasoning < max_tokens:
            raise ValueError(
                f"a thinking budget of {reasoning} tokens must be positive and below "
                f"max_tokens ({max_tokens}): the answer comes out of the same allowance"
            )
        return {"type": "enabled", "budget_tokens": reasoning}, None
    if isinstance(reasoning, str):
        efforts = ("low", "medium", "high", "xhigh", "max")
        if reasoning not in efforts:
            raise ValueError(f"reasoning effort must be one of {', '.join(efforts)}")
        return {"type": "adaptive"}, reasoning
    return dict(reasoning), None


def _sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as ``messages.create`` arguments; fields it does not name go in ``extra_body``."""
    names = _create_parameters()
    known = {k: v for k, v in body.items() if k in names}
    extra = {k: v for k, v in body.items() if k not in names}
    if extra:
        known["extra_body"] = extra
    return known


def sdk_errors() -> AbstractContextManager[None]:
    """Raise SDK and transport errors as the library's provider errors."""
    return raised_as_ours(translate_error)


def translate_error(error: BaseException) -> BaseException:
    """An SDK or transport error as one of the library's provider errors.

    An error the SDK raised becomes ours and stays an instance of the SDK's class too
    (see :func:`_bridged`), so chatlas users' ``except anthropic.RateLimitError`` and
    ``e.status_code`` / ``e.response`` / ``e.body`` keep working. Anything else (a bug,
    a bad argument) is returned unchanged, to be raised as is.
    """
    import anthropic
    import httpx2

    if isinstance(error, ProviderError):
        return error
    if isinstance(error, anthropic.APIStatusError):
        status = error.status_code
        error_type, message = _error_body(error.body, error.message)
        cls = _STATUS_ERRORS.get(status) or (ServerError if status >= 500 else ProviderError)
        # A provider may quote the key it refused: the message never carries it.
        ours = cls(
            redact(f"{status} {error_type}: {message}"),
            status_code=status,
            retry_after=retry_after(error.response.headers),
            error_type=error_type,
        )
        return bridged(ours, error)
    if isinstance(error, anthropic.APITimeoutError):
        return bridged(ProviderConnectionError("the request to Anthropic timed out"), error)
    if isinstance(error, anthropic.APIConnectionError):
        ours = ProviderConnectionError(
            f"could not connect to Anthropic: {error.__cause__ or error}"
        )
        return bridged(ours, error)
    if isinstance(error, TypeError) and "authentication method" in str(error):
        return AuthenticationError(f"no usable credentials: {error}")
    if isinstance(error, (httpx2.HTTPError, OSError)):
        return ProviderConnectionError(
            f"the response could not be read: {type(error).__name__}: {error}"
        )
    return error


def _error_body(body: object, fallback: str) -> tuple[str, str]:
    if isinstance(body, dict):
        inner: Any = body.get("error", body)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(inner, dict):
            details: dict[str, Any] = inner  # pyright: ignore[reportUnknownVariableType]
            return str(details.get("type", "error")), str(details.get("message", fallback))
    return "error", fallback
