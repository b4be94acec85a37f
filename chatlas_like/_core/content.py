"""Content: the pieces a turn is made of.

Every type is a frozen, slotted dataclass: cheap to build (no validation on the hot
path of a stream) and safe to share between the history, callbacks and echo. A
changed piece is a new object (``dataclasses.replace``).

Blocks the library does not model (new server tools, new block types) are kept as
:class:`ContentUnknown` and sent back to the provider unchanged, never dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self, cast

from .renderers import render, render_text
from .tool_info import ToolInfo

__all__ = [
    "Content",
    "ContentCitation",
    "ContentDocument",
    "ContentImage",
    "ContentImageInline",
    "ContentImageRemote",
    "ContentJson",
    "ContentPDF",
    "ContentServerToolRequest",
    "ContentServerToolResult",
    "ContentText",
    "ContentThinking",
    "ContentThinkingDelta",
    "ContentToolRequest",
    "ContentToolRequestFetch",
    "ContentToolRequestSearch",
    "ContentToolResponseFetch",
    "ContentToolResponseSearch",
    "ContentUnknown",
    "ContentUploaded",
    "ImageContentType",
    "Source",
    "WebSource",
    "content_classes",
    "server_tool_request",
    "server_tool_result",
]

ImageContentType = Literal[
    "image/png", "image/jpeg", "image/webp", "image/gif", "image/heic", "image/heif"
]


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a dict (provider data), else an empty dict."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Content:
    """Base class of every content type; ``content_type`` names the kind."""

    content_type: ClassVar[str] = "content"

    def _repr_html_(self) -> str:
        return render_text("content_html", self)

    def _repr_markdown_(self) -> str:
        return render_text("content_markdown", self)

    # -- chatlas's JSON shape (the work is in _chatlas_shape) ---------------------------

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] | str = "python",
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """This content as chatlas's data (``{"content_type": ..., ...}``).

        Parameters
        ----------
        mode
            ``"python"`` keeps Python values; ``"json"`` gives only JSON types.
        include, exclude
            Top-level keys to keep or leave out.
        exclude_none
            Leave out keys whose value is None.
        """
        from .chatlas_shape import dump_content, select

        if mode not in ("python", "json"):
            raise ValueError(f"mode must be 'python' or 'json', got {mode!r}")
        data = dump_content(self, json_mode=mode == "json")
        return select(data, include, exclude, exclude_none)

    def model_dump_json(
        self,
        *,
        indent: int | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        exclude_none: bool = False,
    ) -> str:
        """This content as chatlas's JSON text."""
        from .chatlas_shape import dumps

        data = self.model_dump(
            mode="json", include=include, exclude=exclude, exclude_none=exclude_none
        )
        return dumps(data, indent)

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """Content from chatlas's data; on ``Content`` the ``content_type`` picks the class.

        Raises
        ------
        ValueError
            Not content of this class (unknown ``content_type``, a missing field).
        """
        if isinstance(obj, cls):
            return obj
        from .chatlas_shape import load_content

        return load_content(cls, obj, content_classes())

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray) -> Self:
        """Content from chatlas's JSON text (``model_dump_json()``'s output)."""
        from .chatlas_shape import loads

        return cls.model_validate(loads(json_data))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with the fields in ``update`` changed (as pydantic's ``model_copy``)."""
        import copy
        import dataclasses

        new = dataclasses.replace(self, **dict(update or {}))
        return copy.deepcopy(new) if deep else new

    @classmethod
    def model_construct(cls, **values: Any) -> Self:
        """Content from its fields by name, the others at their defaults (as pydantic's
        ``model_construct``, which chatlas code calls; the fields are still checked)."""
        return cls(**values)


def _byte_size(n: int) -> str:
    """``n`` bytes as chatlas labels a file: ``512 B``, ``5.4 KB``, ``219 KB``, ``3.0 MB``."""
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        shown = round(size, 1) if size < 10 else round(size)
        if shown < 1024:  # 1023.7 KB rounds to 1024: say 1.0 MB instead
            return f"{shown:.1f} {unit}" if shown < 10 else f"{shown:.0f} {unit}"
    size /= 1024
    return f"{size:.1f} TB" if size < 10 else f"{size:.0f} TB"


def code_span(label: str) -> str:
    """``label`` as one Markdown code span: printed chats stay readable when rendered, and a
    file name cannot start a heading or close the span (newlines shown as ``\\n``)."""
    label = label.replace("\r\n", "\\n").replace("\r", "\\n").replace("\n", "\\n")
    longest = run = 0
    for character in label:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if label.startswith("`") or label.endswith("`") else ""  # CommonMark strips one
    return f"{fence}{pad}{label}{pad}{fence}"


def content_classes() -> dict[str, type[Any]]:
    """Each loaded content class by its ``content_type`` (the first class to name one),
    and the citation sources by ``"source:" + type``: what chatlas's data is read into."""
    found: dict[str, type[Any]] = {"source:web": WebSource}
    queue: list[type[Any]] = [Content]
    while queue:
        cls = queue.pop(0)
        # A slotted dataclass is a new class made from the one defined, which stays a
        # subclass of its base: take only the class its module holds under that name.
        module = sys.modules.get(cls.__module__)
        if module is not None and getattr(module, cls.__qualname__, None) is cls:
            found.setdefault(cls.content_type, cls)
        queue.extend(cls.__subclasses__())
    return found


@dataclass(frozen=True, slots=True)
class ContentText(Content):
    """Plain text.

    Parameters
    ----------
    text
        The text.
    extra
        Provider data that travels with the text (e.g. citations), sent back as received.
    """

    content_type: ClassVar[str] = "text"
    text: str
    extra: dict[str, Any] | None = None

    def __add__(self, other: object) -> ContentText:
        """The two texts as one (chatlas's; its ``extra`` is dropped, as chatlas drops it)."""
        if not isinstance(other, ContentText):
            return NotImplemented
        return ContentText(self.text + other.text)

    def __str__(self) -> str:
        return self.text

    @property
    def citations(self) -> list[ContentCitation]:
        """The sources this text cites (from ``extra``), each grounding this text."""
        raw: list[Any] = (self.extra or {}).get("citations") or []
        return [ContentCitation.from_raw(c, grounded_span=self.text) for c in raw]


@dataclass(frozen=True, slots=True)
class ContentJson(Content):
    """Structured data returned by the model (see ``chat_structured``).

    Parameters
    ----------
    value
        The decoded JSON value.
    """

    content_type: ClassVar[str] = "json"
    value: Any

    def __str__(self) -> str:
        return f"```json\n{self.json_text()}\n```"  # chatlas's

    def json_text(self) -> str:
        """The value as indented JSON."""
        import orjson

        return orjson.dumps(self.value, option=orjson.OPT_INDENT_2).decode()


@dataclass(frozen=True, slots=True)
class ContentImage(Content):
    """Base class of image content."""

    content_type: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True)
class ContentImageInline(ContentImage):
    """An image carried inline as base64 data.

    Parameters
    ----------
    image_content_type
        The media type, e.g. ``"image/png"``.
    data
        The base64-encoded image bytes.
    """

    content_type: ClassVar[str] = "image_inline"
    image_content_type: ImageContentType
    data: str

    def __str__(self) -> str:
        return f"[inline image ({self.image_content_type}, {len(self.data)} base64 chars)]"


@dataclass(frozen=True, slots=True)
class ContentImageRemote(ContentImage):
    """An image the provider fetches from a URL.

    Parameters
    ----------
    url
        Where the image lives.
    detail
        Detail hint for providers that take one.
    """

    content_type: ClassVar[str] = "image_remote"
    url: str
    detail: Literal["auto", "low", "high"] = "auto"

    def __str__(self) -> str:
        return f"[remote image: {self.url}]"


@dataclass(frozen=True, slots=True)
class ContentPDF(Content):
    """A PDF document, inline (``data``) or by ``url``.

    Parameters
    ----------
    data
        The PDF bytes, or None when ``url`` is given.
    filename
        A display name.
    url
        Where the provider fetches the PDF, when ``data`` is None.
    """

    content_type: ClassVar[str] = "pdf"
    data: bytes | None = None
    filename: str = "document.pdf"
    url: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("ContentPDF needs exactly one of `data` or `url`")

    def __str__(self) -> str:
        where = _byte_size(len(self.data)) if self.data is not None else self.url
        return code_span(f"[PDF {self.filename} · {where}]")


@dataclass(frozen=True, slots=True)
class ContentDocument(Content):
    """A plain-text document (text, CSV, Markdown...), inline or by ``url``.

    Parameters
    ----------
    data
        The document bytes (UTF-8 text), or None when ``url`` is given.
    filename
        A display name, sent as the document's title.
    mime_type
        The document's media type, e.g. ``"text/csv"``.
    url
        Where the provider fetches the document, when ``data`` is None.
    """

    content_type: ClassVar[str] = "document"
    data: bytes | None = None
    filename: str = "document.txt"
    mime_type: str = "text/plain"
    url: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("ContentDocument needs exactly one of `data` or `url`")
        if self.mime_type.split(";", 1)[0].strip().lower() == "application/pdf":
            raise ValueError(
                "ContentDocument holds text documents; a PDF is a ContentPDF: use "
                "content_pdf_file() or content_pdf_url()"
            )

    def __str__(self) -> str:
        return code_span(f"[document {self.filename} · {self.mime_type}]")


@dataclass(frozen=True, slots=True)
class ContentThinking(Content):
    """The model's extended thinking, kept with its signature and sent back unchanged.

    Parameters
    ----------
    thinking
        The thinking text (empty for redacted thinking).
    extra
        The provider's block as received (signature, redacted data).
    """

    content_type: ClassVar[str] = "thinking"
    thinking: str
    extra: dict[str, Any] | None = None

    def __add__(self, other: object) -> ContentThinking:
        """The two thinkings as one, with the later ``extra`` when it has one (chatlas's)."""
        if not isinstance(other, ContentThinking):
            return NotImplemented
        extra = other.extra if other.extra is not None else self.extra
        return ContentThinking(self.thinking + other.thinking, extra)

    def __str__(self) -> str:
        return f"<thinking>\n{self.thinking}\n</thinking>\n"  # chatlas's

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny): the thinking folded, escaped."""
        from htmltools import HTML

        return HTML(render_text("content_html", self))

    @property
    def redacted(self) -> bool:
        """Whether the provider sent this thinking encrypted (``redacted_thinking``)."""
        return (self.extra or {}).get("type") == "redacted_thinking"

    @property
    def signature(self) -> str | None:
        """The provider's signature of the thinking (needed to send it back), if any."""
        value = (self.extra or {}).get("signature")
        return str(value) if value else None


@dataclass(frozen=True, slots=True)
class ContentThinkingDelta(Content):
    """A piece of thinking as it streams (``stream(content="all")`` yields these).

    Never part of a turn: the finished :class:`ContentThinking` is.

    Parameters
    ----------
    thinking
        The new thinking text (empty at ``"start"`` and ``"end"``).
    phase
        ``"start"`` and ``"end"`` mark a thinking block's bounds; ``"body"`` carries text.
    """

    content_type: ClassVar[str] = "thinking_delta"
    thinking: str
    phase: Literal["start", "body", "end"] = "body"

    def __add__(self, other: object) -> ContentThinkingDelta:
        if not isinstance(other, ContentThinkingDelta):
            return NotImplemented
        return ContentThinkingDelta(self.thinking + other.thinking, self.phase)

    def __str__(self) -> str:
        return self.thinking


@dataclass(frozen=True, slots=True)
class ContentToolRequest(Content):
    """The model asks for a registered tool to be called.

    Parameters
    ----------
    id
        The provider's id for the call; the result answers it.
    name
        The tool's name.
    arguments
        The arguments, decoded from JSON.
    extra
        Provider data kept with the request.
    parse_error
        Set when the arguments could not be decoded (cut off, not JSON); the call
        is then refused without running the tool.
    tool
        What the chat knows of the tool called (name, description, schema,
        annotations), set for a registered tool before any callback sees the request;
        None for an unknown tool. Not part of ``==``.
    """

    content_type: ClassVar[str] = "tool_request"
    id: str
    name: str
    arguments: Any = field(default_factory=dict)
    extra: dict[str, Any] | None = None
    parse_error: str | None = None
    tool: ToolInfo | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return render_text("format_call", self)

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny)."""
        return render("request_tag", self)


@dataclass(frozen=True, slots=True)
class ContentServerToolRequest(Content):
    """A tool the provider runs itself (web search, web fetch, code execution).

    Parameters
    ----------
    id
        The provider's id for the call.
    name
        The server tool's name, e.g. ``"web_search"``.
    arguments
        The call's input.
    block
        The provider's block as received, sent back unchanged.
    """

    content_type: ClassVar[str] = "server_tool_request"
    id: str
    name: str
    arguments: Any
    block: dict[str, Any]

    def __str__(self) -> str:
        return f"[server tool {self.name}: {self.arguments}]"


@dataclass(frozen=True, slots=True)
class ContentServerToolResult(Content):
    """The result of a provider-run tool, kept as received.

    Parameters
    ----------
    tool_use_id
        The id of the server tool request it answers.
    block
        The provider's block as received, sent back unchanged.
    """

    content_type: ClassVar[str] = "server_tool_result"
    tool_use_id: str
    block: dict[str, Any]

    @property
    def block_type(self) -> str:
        """The provider's block type, e.g. ``"web_search_tool_result"``."""
        return str(self.block.get("type", ""))

    @property
    def extra(self) -> dict[str, Any]:
        """The provider's block (chatlas's name for it)."""
        return self.block

    def __str__(self) -> str:
        return f"[{self.block_type}]"


@dataclass(frozen=True, slots=True, init=False)
class ContentToolRequestSearch(ContentServerToolRequest):
    """The model runs a web search (see :func:`~chatlas_like.tool_web_search`).

    Built by the chat from the provider's block; chatlas's ``query=`` (and ``extra=``,
    the provider's block) construct one too.
    """

    content_type: ClassVar[str] = "web_search_request"

    def __init__(
        self,
        id: str | None = None,
        name: str = "web_search",
        arguments: Any = None,
        block: dict[str, Any] | None = None,
        *,
        query: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        _init_server_request(self, id, name, arguments, block or extra, {"query": query})

    @property
    def query(self) -> str:
        """What the model searched for."""
        return str(_mapping(self.arguments).get("query", ""))

    def __str__(self) -> str:
        return f"**web search request**: {self.query!r}"


@dataclass(frozen=True, slots=True, init=False)
class ContentToolRequestFetch(ContentServerToolRequest):
    """The model fetches a web page (see :func:`~chatlas_like.tool_web_fetch`).

    Built by the chat from the provider's block; chatlas's ``url=`` (and ``extra=``)
    construct one too.
    """

    content_type: ClassVar[str] = "web_fetch_request"

    def __init__(
        self,
        id: str | None = None,
        name: str = "web_fetch",
        arguments: Any = None,
        block: dict[str, Any] | None = None,
        *,
        url: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        _init_server_request(self, id, name, arguments, block or extra, {"url": url})

    @property
    def url(self) -> str:
        """The page the model asked for."""
        return str(_mapping(self.arguments).get("url", ""))

    def __str__(self) -> str:
        return f"**web fetch request**: {self.url}"


@dataclass(frozen=True, slots=True, init=False)
class ContentToolResponseSearch(ContentServerToolResult):
    """The pages a web search found, kept as received (encrypted page content included).

    Built by the chat from the provider's block; chatlas's ``sources=`` (and
    ``extra=``) construct one too.
    """

    content_type: ClassVar[str] = "web_search_results"

    def __init__(
        self,
        tool_use_id: str | None = None,
        block: dict[str, Any] | None = None,
        *,
        sources: list[WebSource] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        found = [_source_block(s) for s in sources or []]
        built = {
            "type": "web_search_tool_result",
            "tool_use_id": tool_use_id or "",
            "content": found,
        }
        _init_server_result(self, tool_use_id, block or extra, built)

    @property
    def sources(self) -> list[WebSource]:
        """The pages found, in the order the provider listed them."""
        found: Any = self.block.get("content")
        items = cast("list[Any]", found) if isinstance(found, list) else []
        return [WebSource.from_raw(_mapping(r)) for r in items if isinstance(r, dict)]

    @property
    def error_code(self) -> str | None:
        """The provider's error code when the search failed, else None."""
        code = _mapping(self.block.get("content")).get("error_code")
        return str(code) if code is not None else None

    def __str__(self) -> str:  # chatlas's text (a failed search lists no sources)
        return "**web search results**:\n" + "\n".join(f"* {s}" for s in self.sources)


@dataclass(frozen=True, slots=True, init=False)
class ContentToolResponseFetch(ContentServerToolResult):
    """A fetched web page, kept as received.

    Built by the chat from the provider's block; chatlas's ``url=``, ``status=`` (and
    ``extra=``) construct one too.

    Parameters
    ----------
    tool_use_id
        The id of the fetch request it answers.
    block
        The provider's block as received.
    url
        The page's URL (chatlas's way to build one).
    status
        ``"success"``, ``"error"``, or None when not known (chatlas's default for a
        result built by hand); a result from the provider always has one.
    extra
        chatlas's name for ``block``.
    """

    content_type: ClassVar[str] = "web_fetch_results"
    status: Literal["success", "error"] | None

    def __init__(
        self,
        tool_use_id: str | None = None,
        block: dict[str, Any] | None = None,
        *,
        url: str | None = None,
        status: Literal["success", "error"] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        page: dict[str, Any] = {"type": "web_fetch_result", "url": url or ""}
        if status == "error":
            page = {"type": "web_fetch_tool_result_error", "error_code": "unavailable"}
        built = {"type": "web_fetch_tool_result", "tool_use_id": tool_use_id or "", "content": page}
        given = block or extra
        _init_server_result(self, tool_use_id, given, built)
        if status is None and given is not None:  # the provider's block says how it went
            status = "error" if "error_code" in self._result else "success"
        object.__setattr__(self, "status", status)

    @property
    def _result(self) -> dict[str, Any]:
        return _mapping(self.block.get("content"))

    @property
    def url(self) -> str:
        """The page's URL; ``"failed"`` when the fetch failed (as chatlas: the
        provider's error names no URL, and its code is in :attr:`error_code`)."""
        if "error_code" in self._result:
            return "failed"
        return str(self._result.get("url", ""))

    @property
    def error_code(self) -> str | None:
        """The provider's error code when the fetch failed, else None."""
        code = self._result.get("error_code")
        return str(code) if code is not None else None

    @property
    def title(self) -> str | None:
        """The fetched document's title, when the provider gave one."""
        title = _mapping(self._result.get("content")).get("title")
        return str(title) if title else None

    def __str__(self) -> str:
        return f"**web fetch result**: {self.url}"


def _init_server_request(
    target: ContentServerToolRequest,
    id: str | None,
    name: str,
    arguments: Any,
    block: dict[str, Any] | None,
    given: dict[str, Any],
) -> None:
    """Fill a server tool request from the chat's fields or from chatlas's keywords."""
    if block is None:
        block = {"type": "server_tool_use", "id": id or _new_id("srvtoolu"), "name": name}
        block["input"] = arguments if arguments is not None else _present(given)
    if arguments is None:
        arguments = block.get("input") if "input" in block else _present(given)
    set_field = object.__setattr__  # frozen: fields are set once, here
    set_field(target, "id", id or str(block.get("id", "")))
    set_field(target, "name", name)
    set_field(target, "arguments", arguments)
    set_field(target, "block", block)


def _init_server_result(
    target: ContentServerToolResult,
    tool_use_id: str | None,
    block: dict[str, Any] | None,
    built: dict[str, Any],
) -> None:
    """Fill a server tool result from the chat's fields or from chatlas's keywords."""
    if block is None:
        block = built
    elif "content" not in block:
        block = {**block, "content": built["content"]}
    set_field = object.__setattr__  # frozen: fields are set once, here
    set_field(target, "tool_use_id", tool_use_id or str(block.get("tool_use_id", "")))
    set_field(target, "block", block)


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _new_id(prefix: str) -> str:
    import uuid

    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _source_block(source: Any) -> dict[str, Any]:
    """A search result entry (the API's shape) from a :class:`WebSource` or a dict."""
    if isinstance(source, dict):
        return {"type": "web_search_result", **cast("dict[str, Any]", source)}
    entry: dict[str, Any] = {"type": "web_search_result", "url": getattr(source, "url", "")}
    for key in ("title", "page_age"):
        value = getattr(source, key, None)
        if value:
            entry[key] = value
    return entry


@dataclass(frozen=True, slots=True)
class Source:
    """Where a citation's evidence comes from."""

    type: str


@dataclass(frozen=True, slots=True)
class WebSource(Source):
    """A web page.

    Parameters
    ----------
    type
        Always ``"web"``.
    url
        The page's address.
    title
        The page's title, when known.
    page_age
        How old the provider says the page is, when known.
    """

    type: str = "web"
    url: str = ""
    title: str | None = None
    page_age: str | None = None

    @classmethod
    def from_raw(cls, raw: dict[str, Any]) -> WebSource:
        """A source from a provider's search result or citation."""
        title = raw.get("title")
        age = raw.get("page_age")
        return cls(
            url=str(raw.get("url", "")),
            title=str(title) if title else None,
            page_age=str(age) if age else None,
        )

    def __str__(self) -> str:  # chatlas's text
        return self.url or self.title or "[web source]"


@dataclass(frozen=True, slots=True)
class ContentCitation(Content):
    """A source that grounds part of the model's answer.

    The citation stays in the text's ``extra`` (and goes back to the provider with it);
    this is a view of one, yielded by ``stream(content="all")`` as it arrives and
    listed by :attr:`ContentText.citations`.

    Parameters
    ----------
    source
        The evidence's source, when it has a URL.
    cited_quote
        The quoted evidence, when the provider gives one.
    grounded_span
        The answer text the citation grounds (None while it is still streaming).
    extra
        The provider's citation as received.
    """

    content_type: ClassVar[str] = "citation"
    source: Source | None = None
    cited_quote: str | None = None
    grounded_span: str | None = None
    extra: dict[str, Any] | None = None

    @classmethod
    def from_raw(cls, raw: Any, *, grounded_span: str | None = None) -> ContentCitation:
        """A citation from the provider's citation object."""
        data = _mapping(raw)
        quote = data.get("cited_text")
        return cls(
            source=WebSource.from_raw(data) if data.get("url") else None,
            cited_quote=str(quote) if quote else None,
            grounded_span=grounded_span,
            extra=data or None,
        )

    def __str__(self) -> str:
        label = str(self.source) if self.source is not None else (self.grounded_span or "")
        return f"**citation**: {label}"  # chatlas's


@dataclass(frozen=True, slots=True)
class ContentUploaded(Content):
    """A file uploaded to the provider once (see :class:`~chatlas_like.FileManager`).

    Parameters
    ----------
    id
        The provider's file id.
    mime_type
        The file's media type: ``image/...`` files are sent as images, others as documents.
    provider
        The provider that holds the file (a chat of another provider cannot use it).
    filename
        The name the file was uploaded under.
    extra
        Provider metadata kept with the reference.
    """

    content_type: ClassVar[str] = "uploaded"
    id: str
    mime_type: str
    provider: str = "anthropic"
    filename: str | None = None
    extra: dict[str, Any] | None = None

    def __str__(self) -> str:
        return code_span(f"[uploaded {self.id} · {self.mime_type}]")


_REQUEST_KINDS: dict[str, type[ContentServerToolRequest]] = {
    "web_search": ContentToolRequestSearch,
    "web_fetch": ContentToolRequestFetch,
}
_RESULT_KINDS: dict[str, type[ContentServerToolResult]] = {
    "web_search_tool_result": ContentToolResponseSearch,
    "web_fetch_tool_result": ContentToolResponseFetch,
}


def server_tool_request(
    id: str, name: str, arguments: Any, block: dict[str, Any]
) -> ContentServerToolRequest:
    """A server tool request of the class that knows the tool (search, fetch, or generic)."""
    return _REQUEST_KINDS.get(name, ContentServerToolRequest)(id, name, arguments, block)


def server_tool_result(tool_use_id: str, block: dict[str, Any]) -> ContentServerToolResult:
    """A server tool result of the class that knows its block type."""
    kind = str(block.get("type", ""))
    return _RESULT_KINDS.get(kind, ContentServerToolResult)(tool_use_id, block)


@dataclass(frozen=True, slots=True)
class ContentUnknown(Content):
    """A block of a type this library does not model; sent back unchanged.

    Parameters
    ----------
    block
        The provider's block as received.
    """

    content_type: ClassVar[str] = "unknown"
    block: dict[str, Any]

    def __str__(self) -> str:
        return f"[{self.block.get('type', 'unknown')} block]"
