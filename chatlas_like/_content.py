"""Content: the pieces a turn is made of.

Every type is a frozen, slotted dataclass: cheap to build (no validation on the hot
path of a stream) and safe to share between the history, callbacks and echo. A
changed piece is a new object (``dataclasses.replace``).

Blocks the library does not model (new server tools, new block types) are kept as
:class:`ContentUnknown` and sent back to the provider unchanged, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = [
    "Content",
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
    "ContentToolRequest",
    "ContentUnknown",
]

ImageContentType = Literal["image/png", "image/jpeg", "image/webp", "image/gif"]


@dataclass(frozen=True, slots=True)
class Content:
    """Base class of every content type; ``content_type`` names the kind."""

    content_type: ClassVar[str] = "content"

    def _repr_html_(self) -> str:
        from ._display import content_html

        return content_html(self)

    def _repr_markdown_(self) -> str:
        from ._display import content_markdown

        return content_markdown(self)


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

    def __str__(self) -> str:
        return self.text


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
        return f"[PDF: {self.filename}]"


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

    def __str__(self) -> str:
        return f"[document: {self.filename}]"


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
    """

    content_type: ClassVar[str] = "tool_request"
    id: str
    name: str
    arguments: Any = field(default_factory=dict)
    extra: dict[str, Any] | None = None
    parse_error: str | None = None

    def __str__(self) -> str:
        from ._display import format_call

        return format_call(self)

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny)."""
        from ._display import request_tag

        return request_tag(self)


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

    def __str__(self) -> str:
        return f"[{self.block_type}]"


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
