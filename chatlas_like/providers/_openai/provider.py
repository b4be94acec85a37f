"""OpenAI's two APIs as providers, and the only module that imports the ``openai`` SDK.

The SDK is imported on the first request, not with the package. Requests go through the
SDK's client (authentication, headers, connection pool, timeouts, status errors) with
its own retries off (``max_retries=0``: the chat retries in one place); the response
body is read as raw server-sent events (or JSON) and decoded here, so streamed and
whole answers feed the same accumulator. SDK and transport errors become
:mod:`chatlas_like._core.errors` exceptions that are the SDK's classes too.

:class:`OpenAIResponsesProvider` speaks the Responses API (``ChatOpenAI``);
:class:`OpenAICompletionsProvider` speaks Chat Completions (``ChatOpenAICompletions``
and every OpenAI-compatible server: Ollama, Groq, Mistral...).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, date, datetime
from typing import Any, ClassVar, cast

import orjson

from ..._core.content import ContentUploaded
from ..._core.errors import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
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
from .._sse import parse_sse, parse_sse_async
from .._translated import PrefixCache
from .._types import (
    Accumulator,
    BatchAnswer,
    BatchStatus,
    Capabilities,
    FileMetadata,
    FileSource,
    ModelInfo,
    RequestSpec,
    TokenPrice,
)
from . import batches, completions, responses
from .content import PROVIDER_KEY, as_list, as_map
from .prices import OPENAI_PRICES

__all__ = [
    "DEFAULT_MODEL",
    "OpenAICompletionsProvider",
    "OpenAIResponsesProvider",
    "translate_error",
]

DEFAULT_MODEL = "gpt-5.6-terra"  # chatlas 0.23.0's default for ChatOpenAI

# The SDK's own header for "hand me the raw response, streamed" (what its
# ``with_streaming_response`` sets), so the body is read as it arrives.
_RAW_STREAM: Any = {"headers": {"X-Stainless-Raw-Response": "stream"}}
# What /responses/input_tokens takes of a request body.
_COUNTED = frozenset({"input", "model", "tools", "text", "tool_choice", "reasoning"})
_STATUS_ERRORS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    413: RequestTooLargeError,
    429: RateLimitError,
}


class _OpenAIProvider(Provider):
    """What both APIs share: the SDK client, errors, models and prices."""

    name = "OpenAI"
    label = "OpenAI"
    prices: ClassVar[Mapping[str, TokenPrice]] = OPENAI_PRICES
    sdk_loggers: ClassVar[tuple[str, ...]] = ("openai", "httpx2")
    capabilities = Capabilities(batches=True)
    saved_fields: ClassVar[Mapping[str, str]] = {"model": "str"}

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        client_kwargs: dict[str, Any] | None = None,
        name: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        azure: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        if name is not None:
            self.name = self.label = name
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._client_kwargs = dict(client_kwargs or {})
        self._sync_kwargs, self._async_kwargs = split_http_client(self._client_kwargs)
        self._azure = dict(azure) if azure is not None else None
        self._client = SyncClient()
        weakref.finalize(self, self._client.close)  # its pool closes with the provider
        self._async_clients = LoopClients(lambda: self._new_client(True))
        self._prefix = PrefixCache()  # the last request's turns: a long chat's are kept

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r})"

    # -- pure ------------------------------------------------------------------------------

    def supported_model_params(self) -> set[str]:
        return {"temperature", "top_p", "max_tokens", "top_k", "log_probs"}

    def saved_settings(self) -> dict[str, Any]:
        return {"model": self.model}

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> _OpenAIProvider:
        return cls(api_key=api_key, base_url=base_url, **settings)

    def warm_up(self) -> None:
        self._sync_client()

    # -- send ------------------------------------------------------------------------------

    path: ClassVar[str]  # the route under the base URL, as the SDK names it

    def _replayed(self, data: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """A whole (non-streamed) response as stream events."""
        raise NotImplementedError

    def open(self, body: dict[str, Any]) -> Events:
        client = self._sync_client()
        with sdk_errors(self.name):
            # The body is sent as built: the SDK's typed ``create`` would walk it first
            # (its parameter transform costs ~2 ms per 100 items, a long chat's most).
            response = client.post(self.path, cast_to=object, body=body, options=_RAW_STREAM)
            if body.get("stream"):
                source: Iterator[dict[str, Any]] = parse_sse(response.iter_bytes())
            else:
                source = self._replayed(_json_object(response.read()))
        return Events(_translating(source, self.name), response.http_response.close)

    async def open_async(self, body: dict[str, Any]) -> AsyncEvents:
        client = await self._async_clients.get()
        with sdk_errors(self.name):
            response = await client.post(self.path, cast_to=object, body=body, options=_RAW_STREAM)
            if body.get("stream"):
                source: AsyncIterator[dict[str, Any]] = parse_sse_async(response.iter_bytes())
            else:
                source = _aiter(self._replayed(_json_object(await response.read())))
        return AsyncEvents(_translating_async(source, self.name), response.http_response.aclose)

    def list_models(self) -> list[ModelInfo]:
        """The models the server offers, newest first, priced where known (as chatlas's)."""
        with sdk_errors(self.name):
            models = list(self._sync_client().models.list())
        infos: list[ModelInfo] = []
        for m in models:
            price = get_token_price(m.id, self.key)
            info: ModelInfo = {
                "id": m.id,
                "provider": self.key,
                "input": price.input if price else None,
                "output": price.output if price else None,
                "cached_input": price.cached_input if price else None,
            }
            created = getattr(m, "created", None)
            if isinstance(created, (int, float)):
                info["created_at"] = datetime.fromtimestamp(created, tz=UTC).date()
            infos.append(info)
        infos.sort(key=lambda info: info.get("created_at", date.min), reverse=True)
        return infos

    # -- files (shared by both APIs: an upload belongs to the key, not the API) -------------

    def file_upload(self, source: FileSource) -> ContentUploaded:
        """Upload ``source`` (``purpose="user_data"``); a reference to use as content."""
        with sdk_errors(self.name):
            meta = self._sync_client().files.create(
                file=(source.filename, source.data, source.mime_type), purpose="user_data"
            )
        return ContentUploaded(
            id=meta.id,
            mime_type=source.mime_type,
            provider=PROVIDER_KEY,
            filename=meta.filename,
            extra={"filename": meta.filename, "bytes": meta.bytes},
        )

    def file_list(self) -> list[FileMetadata]:
        """Every file of this API key (all pages)."""
        with sdk_errors(self.name):
            return [_file_metadata(m) for m in self._sync_client().files.list()]

    def file_get(self, file_id: str) -> FileMetadata:
        with sdk_errors(self.name):
            return _file_metadata(self._sync_client().files.retrieve(file_id))

    def file_delete(self, file_id: str) -> None:
        with sdk_errors(self.name):
            self._sync_client().files.delete(file_id)

    def file_download(self, file_id: str) -> bytes:
        with sdk_errors(self.name):
            return self._sync_client().files.content(file_id).read()

    # -- the Batch API (sync: a batch is polled over minutes or hours) ----------------------

    def batch_submit(self, bodies: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Upload the requests as a batch input file and create the batch on it."""
        endpoint = "/v1" + self.path
        data = batches.input_file(endpoint, bodies)
        with sdk_errors(self.name):
            client = self._sync_client()
            upload = client.files.create(
                file=("batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = client.batches.create(
                input_file_id=upload.id, endpoint=endpoint, completion_window="24h"
            )
            return batch.model_dump(mode="json")

    def batch_retrieve(self, batch_id: str) -> dict[str, Any]:
        with sdk_errors(self.name):
            return self._sync_client().batches.retrieve(batch_id).model_dump(mode="json")

    def batch_status(self, batch: Mapping[str, Any]) -> BatchStatus:
        return batches.batch_status(batch)

    def batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        """The lines of an ended batch's output and error files."""
        batch = self.batch_retrieve(batch_id)  # the file ids are on the latest record
        failure = batches.batch_failure(batch)
        if failure is not None:
            raise BadRequestError(failure + " (delete the job's file to submit it again)")
        file_ids = [batch.get(k) for k in ("output_file_id", "error_file_id")]
        return batches.output_lines(self.file_download(str(f)) for f in file_ids if f)

    def batch_answer(self, line: Mapping[str, Any], spec: RequestSpec) -> BatchAnswer:
        request_id, body, error = batches.outcome(line)
        if body is None:
            return BatchAnswer(request_id, None, error)
        accumulator = self.accumulator(spec)
        for event in self._replayed(body):
            accumulator.feed(event)
        return BatchAnswer(request_id, accumulator.turn())

    # -- clients ---------------------------------------------------------------------------

    def _sync_client(self) -> Any:
        return self._client.get(lambda: self._new_client(False))

    def _new_client(self, is_async: bool) -> Any:
        kwargs = self._async_kwargs if is_async else self._sync_kwargs
        api_key = self._api_key or os.environ.get(self._api_key_env)
        if not api_key:
            raise AuthenticationError(
                f"No {self.name} API key: pass api_key= or set {self._api_key_env}. To try "
                "chatlas_like without one, point base_url= at a scripted model "
                "(chatlas_like.testing.LoopbackServer)."
            )
        # The SDK is loaded: its loggers (and its HTTP client's) redact as ours do.
        remember_secret(api_key)
        redact_loggers((*self.sdk_loggers, "httpcore2"))
        args: dict[str, Any] = {"api_key": api_key, "max_retries": 0, **kwargs}
        if self.base_url is not None:
            args["base_url"] = self.base_url
        import openai

        if self._azure is not None:  # endpoint, deployment and API version
            args.update(self._azure)
            return openai.AsyncAzureOpenAI(**args) if is_async else openai.AzureOpenAI(**args)
        return openai.AsyncOpenAI(**args) if is_async else openai.OpenAI(**args)

    def close(self) -> None:
        """Close the pooled connection of the sync client (async ones close with their loop)."""
        self._client.close()

    async def close_async(self) -> None:
        """Close the sync client's pool and the async client of the running event loop."""
        self.close()
        await self._async_clients.close_current()


class OpenAIResponsesProvider(_OpenAIProvider):
    """OpenAI's Responses API through the official SDK (chatlas's ``OpenAIProvider``).

    Parameters
    ----------
    model
        The model id, e.g. ``"gpt-5.4"``.
    api_key
        The API key; ``OPENAI_API_KEY`` (or ``api_key_env``) when None.
    base_url
        Another endpoint (``http://127.0.0.1:PORT/v1`` for the loopback test server).
    client_kwargs
        Extra arguments for the SDK client (``timeout``, ``default_headers``...).
    name
        The provider's name as people read it (``"OpenAI"``; ``"Azure/OpenAI"``).
    """

    path = "/responses"

    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        return responses.build_request(turns, spec, model=self.model, prefix=self._prefix)

    def accumulator(self, spec: RequestSpec | None = None) -> Accumulator:
        structured = spec is not None and spec.data_model is not None
        return responses.ResponsesAccumulator(structured, provider_key=self.key)

    def count_tokens(self, body: dict[str, Any]) -> int:
        """Input tokens of a request body, by the API's ``/responses/input_tokens``."""
        counted = {k: v for k, v in body.items() if k in _COUNTED}
        with sdk_errors(self.name):
            data = self._sync_client().post("/responses/input_tokens", cast_to=object, body=counted)
        return int(as_map(data).get("input_tokens") or 0)

    def _replayed(self, data: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        return responses.response_events(data)


class OpenAICompletionsProvider(_OpenAIProvider):
    """OpenAI's Chat Completions API through the official SDK: OpenAI itself and every
    server that speaks it (chatlas's ``OpenAICompletionsProvider``).

    Parameters
    ----------
    model, api_key, base_url, client_kwargs, name
        As for :class:`OpenAIResponsesProvider`.
    preserve_thinking
        Send the model's reasoning back as ``reasoning_content`` (DeepSeek and
        OpenRouter want it).
    stream_options
        Ask for the usage in the stream's last chunk (Mistral and Databricks refuse it).
    """

    path = "/chat/completions"

    def __init__(
        self, *, preserve_thinking: bool = False, stream_options: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.preserve_thinking = preserve_thinking
        self.stream_options = stream_options

    @property
    def key(self) -> str:
        # "OpenAI" on both APIs, as chatlas names them; this one's chat files and
        # uploads are its own, and it costs what OpenAI's prices say.
        return "openai-completions" if self.name == "OpenAI" else self.name.lower()

    def supported_model_params(self) -> set[str]:
        return {
            "temperature",
            "top_p",
            "frequency_penalty",
            "presence_penalty",
            "seed",
            "max_tokens",
            "log_probs",
            "stop_sequences",
        }

    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        return completions.build_request(
            turns,
            spec,
            model=self.model,
            preserve_thinking=self.preserve_thinking,
            stream_options=self.stream_options,
            prefix=self._prefix,
        )

    def downloads(self, turns: Sequence[Turn]) -> list[str]:
        """Files given by URL: this API takes a file's bytes only."""
        return completions.file_urls(self._prefix.unseen(turns))  # the rest were sent

    def accumulator(self, spec: RequestSpec | None = None) -> Accumulator:
        structured = spec is not None and spec.data_model is not None
        priced = "openai" if self.key == "openai-completions" else self.key
        return completions.CompletionsAccumulator(structured, provider_key=priced)

    def _replayed(self, data: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        return completions.completion_events(data)


class LocalServerProvider(OpenAICompletionsProvider):
    """A local server speaking Chat Completions (Ollama, LM Studio), whose models are
    listed by its own route: ``models_path`` under its root URL. Neither has a batch API."""

    capabilities = Capabilities()

    def __init__(self, *, root_url: str, models_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root_url = root_url
        self.models_path = models_path

    def list_models(self) -> list[ModelInfo]:
        """The models the server has (Ollama: installed; LM Studio: loaded)."""
        return [cast(ModelInfo, m) for m in local_models(self.root_url, self.models_path)]


def local_models(root_url: str, path: str, api_key: str | None = None) -> list[dict[str, Any]]:
    """The models a local server lists at ``path``: Ollama's ``/api/tags`` (names less
    ``:latest``) or the OpenAI-style ``/v1/models``. ``OSError`` when it does not answer."""
    import re
    import urllib.request

    request = urllib.request.Request(root_url + path)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=10) as response:  # a URL the user gave
        data = as_map(orjson.loads(response.read()))
    if path == "/api/tags":
        return [
            {
                "id": re.sub(r":latest$", "", str(m.get("name", ""))),
                "created_at": m.get("modified_at"),
                "size": m.get("size"),
            }
            for m in map(as_map, as_list(data.get("models")))
        ]
    return [{"id": str(m.get("id", ""))} for m in map(as_map, as_list(data.get("data")))]


def _file_metadata(meta: Any) -> FileMetadata:
    created = getattr(meta, "created_at", None)
    expires = getattr(meta, "expires_at", None)
    return FileMetadata(
        id=meta.id,
        filename=meta.filename,
        mime_type=None,  # OpenAI keeps no media type
        size_bytes=meta.bytes,
        created_at=datetime.fromtimestamp(created, tz=UTC) if created is not None else None,
        expires_at=datetime.fromtimestamp(expires, tz=UTC) if expires is not None else None,
        provider=PROVIDER_KEY,
        extra=meta.model_dump(mode="json"),
    )


async def _aiter(events: Iterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for event in events:
        yield event


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise ServerError(f"the response is not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ServerError("the response is not a JSON object")
    return data  # pyright: ignore[reportUnknownVariableType]


def _translating(source: Iterator[dict[str, Any]], name: str) -> Iterator[dict[str, Any]]:
    with sdk_errors(name):  # entered once per response, not once per event
        yield from source


async def _translating_async(
    source: AsyncIterator[dict[str, Any]], name: str
) -> AsyncIterator[dict[str, Any]]:
    with sdk_errors(name):
        async for event in source:
            yield event


def sdk_errors(name: str = "OpenAI") -> AbstractContextManager[None]:
    """Raise SDK and transport errors as the library's provider errors."""
    return raised_as_ours(lambda e: translate_error(e, name))


def translate_error(error: BaseException, name: str = "OpenAI") -> BaseException:
    """An SDK or transport error as one of the library's provider errors, still an
    instance of the SDK's class (``except openai.RateLimitError`` keeps working)."""
    import httpx2
    import openai

    if isinstance(error, ProviderError):
        return error
    if isinstance(error, openai.APIStatusError):
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
    if isinstance(error, openai.APITimeoutError):
        return bridged(ProviderConnectionError(f"the request to {name} timed out"), error)
    if isinstance(error, openai.APIConnectionError):
        ours = ProviderConnectionError(f"could not connect to {name}: {error.__cause__ or error}")
        return bridged(ours, error)
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
            kind = details.get("code") or details.get("type") or "error"
            return str(kind), str(details.get("message", fallback))
    return "error", fallback
