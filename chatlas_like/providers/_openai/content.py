"""Content as OpenAI's two APIs take it: images and files as data URLs, a tool call's
arguments as JSON text, and a response's arguments read back (no SDK, no I/O)."""

from __future__ import annotations

import base64
from typing import Any, cast

import orjson

from ..._core.content import (
    ContentDocument,
    ContentImageInline,
    ContentPDF,
    ContentUploaded,
)

__all__ = [
    "IMAGE_TYPES",
    "PROVIDER_KEY",
    "arguments_json",
    "as_list",
    "as_map",
    "file_data_url",
    "image_data_url",
    "read_arguments",
    "uploaded_here",
]

PROVIDER_KEY = "openai"  # uploads made through either API belong to this key
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def image_data_url(content: ContentImageInline, api: str) -> str:
    """An inline image as a ``data:`` URL; a type OpenAI cannot read is refused first."""
    if content.image_content_type not in IMAGE_TYPES:
        raise ValueError(
            f"OpenAI doesn't support {content.image_content_type} images. Convert to "
            f"image/png, image/jpeg, image/webp, or image/gif first ({api})."
        )
    return f"data:{content.image_content_type};base64,{content.data}"


def file_data_url(content: ContentPDF | ContentDocument, data: bytes) -> str:
    """A file's bytes as a ``data:`` URL of its media type."""
    mime = "application/pdf" if isinstance(content, ContentPDF) else content.mime_type
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def uploaded_here(content: ContentUploaded) -> None:
    """Refuse a file uploaded to another provider, as chatlas does."""
    if content.provider != PROVIDER_KEY:
        raise ValueError(
            f"This file was uploaded to provider '{content.provider}', but is being used "
            "with OpenAI. Re-upload it with an OpenAI chat."
        )


def arguments_json(arguments: Any) -> str:
    """A tool call's arguments as the JSON text the APIs carry."""
    return orjson.dumps(arguments if isinstance(arguments, dict) else {}).decode()


def read_arguments(raw: str, name: str, *, complete: bool) -> tuple[Any, str | None]:
    """A call's arguments from their JSON text, or why they cannot be read (the model
    reads the reason in a refused result and can send the call again)."""
    if not complete:
        return {}, f"The arguments of `{name}` were cut off; send the call again."
    if not raw.strip():
        return {}, None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        shown = raw if len(raw) <= 200 else raw[:200] + "…"
        return {}, f"The arguments of `{name}` are not valid JSON: {shown}"
    return value, None


def as_list(value: object) -> list[Any]:
    """``value`` if it is a JSON array, else empty (responses are untrusted input)."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def as_map(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else empty."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}
