"""Images, PDFs and documents as prompt content, from files, URLs and plots.

Images from files are shrunk before they are sent (``resize="low"`` by default: the
model sees little more in a larger image, and every pixel costs tokens); resizing
needs Pillow (``pip install 'chatlas_like[images]'``), ``resize="none"`` sends the
file's bytes as they are. As in chatlas, leaving ``resize`` out warns
(:class:`MissingResizeWarning`, chatlas's words) on every call; giving it, even
``"low"``, does not. An image already within the size is sent unchanged, never
re-encoded. PDFs and images given by URL are fetched by the provider; a text document
given by URL keeps its URL and is downloaded when a request is built (Anthropic fetches
only PDFs itself), as in chatlas: building one works offline.

A document URL is downloaded only when the code of this process asked for it:
:func:`content_document_url` approves its URL (for the rest of the process). A
``ContentDocument`` with a URL that arrived any other way (a chat file, a Shiny
bookmark, ``from_json``, one built by hand) is not downloaded: the request fails
before anything is sent, saying how to approve it. Every download is guarded
(:mod:`chatlas_like._core.download`): no private, loopback or link-local address unless
``allow_private=True``, no redirect to another host, at most
:data:`~chatlas_like._core.download.MAX_BYTES`, within
:data:`~chatlas_like._core.download.DEADLINE` seconds all told.

HEIC/HEIF images are accepted as chatlas accepts them (resizing needs ``pillow-heif``);
Anthropic does not take them, so a request holding one fails with a clear error before
anything is sent.
"""

from __future__ import annotations

import base64
import functools
import io
import itertools
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlparse

from .content import (
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentPDF,
    ImageContentType,
)
from .missing import MISSING, MISSING_TYPE

__all__ = [
    "MissingResizeWarning",
    "content_document_file",
    "content_document_url",
    "content_image_file",
    "content_image_plot",
    "content_image_url",
    "content_pdf_file",
    "content_pdf_url",
]

Resize = Literal["low", "high", "none"] | str

_IMAGE_TYPES: dict[str, ImageContentType] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".heic": "image/heic",
    ".heif": "image/heif",
}
_HEIC_HEIF = ("image/heic", "image/heif")
_DOCUMENT_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".html": "text/html",
    ".htm": "text/html",
    ".xml": "text/xml",
    # Office formats by their registered types (Anthropic reads none of them: a request
    # holding one is refused before it is sent). Anything else, YAML and source code
    # included, is text/plain, as in chatlas.
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".rtf": "application/rtf",
    ".doc": "application/msword",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".xls": "application/vnd.ms-excel",
}
# The suffix a generated name gets for a media type: the first listed for it above.
_DOCUMENT_SUFFIXES = {mime: suffix for suffix, mime in reversed(_DOCUMENT_TYPES.items())}
DOCUMENT_CACHE_SIZE = 16
_SIZE = re.compile(r"^(\d+)x(\d+)(>?)(!?)$")
_names = itertools.count(1)
# Document URLs this process's code asked for (content_document_url), and whether each
# may be on a private address: the user's say-so, which a loaded file cannot give.
_approved: dict[str, bool] = {}


# -- images ------------------------------------------------------------------------------------


class MissingResizeWarning(RuntimeWarning):
    """``content_image_file()`` was called without ``resize``: the image is shrunk to
    ``"low"``, as the warning says (chatlas's warning, in its words)."""


_MISSING_RESIZE = (
    "The `resize` parameter is missing. Defaulting to `resize='low'`. "
    "As a result, the image has likely lost quality before the model received it. "
    "Set `resize='low'` to suppress this warning, `resize='high'` for higher quality, or "
    "`resize='none'` to disable resizing."
)


def content_image_url(
    url: str, detail: Literal["auto", "low", "high"] = "auto"
) -> ContentImageInline | ContentImageRemote:
    """An image by URL: the provider fetches it; a ``data:`` URL is sent inline.

    Parameters
    ----------
    url
        An ``http(s)`` URL, or a ``data:image/...;base64,...`` URL.
    detail
        ``"auto"``, ``"low"`` or ``"high"`` (a hint some providers take).
    """
    if detail not in ("auto", "low", "high"):
        raise ValueError("detail must be 'auto', 'low' or 'high'")
    if url.startswith("data:"):
        media_type, data = _parse_data_url(url)
        if media_type not in _IMAGE_TYPES.values():
            raise ValueError(f"unsupported image type in the data URL: {media_type}")
        return ContentImageInline(cast(ImageContentType, media_type), data)
    return ContentImageRemote(url=url, detail=detail)


def content_image_file(
    path: str | Path,
    content_type: Literal["auto"] | ImageContentType = "auto",
    resize: Resize | MISSING_TYPE = MISSING,
) -> ContentImageInline:
    """An image file, sent inline.

    Parameters
    ----------
    path
        The image (PNG, JPEG, WebP, GIF; HEIC or HEIF for providers that take them).
    content_type
        The media type; ``"auto"`` takes it from the extension.
    resize
        ``"low"`` fits the image in 512x512; ``"high"`` in 2000x768 (landscape) or
        768x2000 (portrait); ``"none"`` sends the file as it is; ``"WxH"`` fits it in
        W by H, ``"WxH>"`` only shrinks, ``"WxH!"`` stretches to exactly W by H. The
        aspect ratio is kept except with ``!``; an image is never enlarged to fit.
        Resizing needs Pillow. Left out, it is ``"low"``, with chatlas's
        :class:`MissingResizeWarning`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} must be an existing file")
    if content_type == "auto":
        found = _IMAGE_TYPES.get(path.suffix.lower())
        if found is None:
            raise ValueError(
                f"unsupported image file extension {path.suffix!r}; "
                f"use one of {', '.join(sorted(_IMAGE_TYPES))}"
            )
        content_type = found
    if resize != "none" and content_type in _HEIC_HEIF:
        _register_heif()
    if isinstance(resize, MISSING_TYPE):
        warnings.warn(_MISSING_RESIZE, MissingResizeWarning, stacklevel=2)
        resize = "low"
    data = path.read_bytes() if resize == "none" else _resized(path, resize)
    return ContentImageInline(content_type, base64.b64encode(data).decode())


def _register_heif() -> None:
    try:
        import pillow_heif  # pyright: ignore[reportMissingImports]
    except ImportError:
        raise ImportError(
            "resizing a HEIC/HEIF image needs pillow-heif: pip install pillow-heif, "
            "or pass resize='none' to send the file as it is"
        ) from None
    module: Any = pillow_heif  # untyped, optional
    module.register_heif_opener()


def _resized(path: Path, resize: str) -> bytes:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            "resizing an image needs Pillow: pip install 'chatlas_like[images]', "
            "or pass resize='none' to send the file as it is"
        ) from None
    with Image.open(path) as image:
        box, stretch = _target(resize, image.width, image.height)
        if box is None:
            return path.read_bytes()
        image_format = image.format
        if stretch:
            resized = image.resize(box)
        else:
            resized = image.copy()
            resized.thumbnail(box)
        buffer = io.BytesIO()
        resized.save(buffer, format=image_format)
        return buffer.getvalue()


def _target(resize: str, width: int, height: int) -> tuple[tuple[int, int] | None, bool]:
    """The box to fit in (None when the image fits already) and whether to stretch."""
    if resize == "low":
        box = (512, 512)
    elif resize == "high":
        box = (2000, 768) if width > height else (768, 2000)
    else:
        match = _SIZE.match(resize)
        if match is None:
            raise ValueError(
                f"invalid resize {resize!r}: use 'low', 'high', 'none', 'WxH', 'WxH>' or 'WxH!'"
            )
        box = (int(match[1]), int(match[2]))
        if match[4]:
            return (None if (width, height) == box else box), True
    if width <= box[0] and height <= box[1]:
        return None, False
    return box, False


def content_image_plot(width: int = 768, height: int = 768, dpi: int = 72) -> ContentImageInline:
    """The current matplotlib figure as a PNG image (needs matplotlib).

    Parameters
    ----------
    width, height
        The image's size in pixels.
    dpi
        Dots per inch of the rendering.
    """
    if width <= 0 or height <= 0 or dpi <= 0:
        raise ValueError("width, height and dpi must be positive")
    try:
        import matplotlib.pyplot as plt  # pyright: ignore[reportMissingImports]
    except ImportError:
        raise ImportError("content_image_plot() needs matplotlib: pip install matplotlib") from None
    pyplot: Any = plt
    if not pyplot.get_fignums():
        raise RuntimeError(  # chatlas's words
            "No matplotlib figure to save. Please create one before calling `content_image_plot()`."
        )
    figure: Any = pyplot.gcf()
    size = figure.get_size_inches()
    try:
        figure.set_size_inches(width / dpi, height / dpi)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        figure.set_size_inches(*size)
    return ContentImageInline("image/png", base64.b64encode(buffer.getvalue()).decode())


# -- PDFs --------------------------------------------------------------------------------------


def content_pdf_file(path: str | Path) -> ContentPDF:
    """A PDF file, sent inline.

    Parameters
    ----------
    path
        The PDF.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no PDF at {path}")
    if path.suffix.lower() != ".pdf":
        raise ValueError(f"{path} is not a PDF (a .pdf file)")
    return ContentPDF(data=path.read_bytes(), filename=path.name)


def content_pdf_url(url: str) -> ContentPDF:
    """A PDF by URL: the provider fetches it (a ``data:`` URL is sent inline).

    Parameters
    ----------
    url
        An ``http(s)`` URL, or a ``data:application/pdf;base64,...`` URL.
    """
    if url.startswith("data:"):
        media_type, data = _parse_data_url(url)
        if media_type != "application/pdf":
            raise ValueError(f"the data URL holds {media_type}, not application/pdf")
        return ContentPDF(data=base64.b64decode(data), filename=f"file_{next(_names):03d}.pdf")
    name = _url_name(url)
    filename = name if name.lower().endswith(".pdf") else f"file_{next(_names):03d}.pdf"
    return ContentPDF(url=url, filename=filename)


# -- text documents ------------------------------------------------------------------------------


def content_document_file(
    path: str | Path, mime_type: Literal["auto"] | str = "auto"
) -> ContentDocument:
    """A text document (plain text, Markdown, CSV, JSON, code...), sent inline.

    Parameters
    ----------
    path
        The file; its name is sent as the document's title.
    mime_type
        The media type; ``"auto"`` guesses from the extension (``text/plain`` when
        unknown, as for most source code).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    if path.suffix.lower() == ".pdf":
        raise ValueError("content_document_file() does not take PDFs: use content_pdf_file()")
    resolved = _guess_document_type(path.name) if mime_type == "auto" else mime_type
    return ContentDocument(data=path.read_bytes(), filename=path.name, mime_type=resolved)


def content_document_url(
    url: str, mime_type: Literal["auto"] | str = "auto", *, allow_private: bool = False
) -> ContentDocument:
    """A text document by URL, downloaded when a request holding it is built.

    Anthropic fetches only PDFs by URL, so the document is downloaded here, on send (once
    per process for the last few URLs); building it needs no network. Calling this
    approves downloading ``url`` for the rest of the process: a document URL that
    arrives any other way (a chat file, a bookmark) is never downloaded unless it is
    approved here.

    Parameters
    ----------
    url
        An ``http(s)`` URL, or a ``data:`` URL carrying the document.
    mime_type
        The media type; ``"auto"`` guesses from the URL's extension (a ``data:`` URL
        names its own).
    allow_private
        Allow a private, loopback or link-local address (an intranet server,
        ``127.0.0.1``); refused by default. Redirects to another host, a body over
        10 MB and a download taking over 30 s are refused either way.
    """
    if url.startswith("data:"):
        media_type, data = _parse_data_url(url)
        # A data: URL has no path to name it by: the name says what it holds instead.
        suffix = _DOCUMENT_SUFFIXES.get(media_type, ".txt")
        name = f"document_{next(_names):03d}{suffix}"
        return ContentDocument(data=base64.b64decode(data), filename=name, mime_type=media_type)
    name = _url_name(url)
    if name.lower().endswith(".pdf"):
        raise ValueError("content_document_url() does not take PDFs: use content_pdf_url()")
    if urlparse(url).scheme not in ("http", "https"):
        raise ValueError(f"only http(s) and data: URLs can be downloaded, not {url!r}")
    resolved = _guess_document_type(name) if mime_type == "auto" else mime_type
    filename = name or f"document_{next(_names):03d}.txt"
    _approved[url] = allow_private or _approved.get(url, False)
    return ContentDocument(url=url, filename=filename, mime_type=resolved)


def fetch_document(url: str) -> bytes:
    """The bytes of a document given by URL (a provider that cannot fetch it calls this).

    Raises
    ------
    ValueError
        ``url`` was not approved by :func:`content_document_url`, or the download was
        refused or failed.
    """
    allow_private = _approved.get(url)
    if allow_private is None:
        raise ValueError(
            f"not downloading {url!r}: a document URL is downloaded only when this "
            "program asked for it with content_document_url(), and this one came from "
            "elsewhere (a saved chat, a bookmark, from_json, a ContentDocument built by "
            "hand). If you trust it, call content_document_url() with it once (and "
            "allow_private=True for an address on your own network), then send again"
        )
    return _fetched(url, allow_private)


def fetch_documents(urls: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each URL (see :func:`fetch_document`), by URL: what a driver sends
    back for the turn loop's ``Download`` step."""
    return {url: fetch_document(url) for url in dict.fromkeys(urls)}


@functools.lru_cache(maxsize=DOCUMENT_CACHE_SIZE)
def _fetched(url: str, allow_private: bool) -> bytes:
    from .download import download

    return download(url, allow_private=allow_private)


def _guess_document_type(name: str) -> str:
    return _DOCUMENT_TYPES.get(Path(name).suffix.lower(), "text/plain")


def _url_name(url: str) -> str:
    return Path(urlparse(url).path).name


def _parse_data_url(url: str) -> tuple[str, str]:
    head, sep, data = url[5:].partition(",")
    media_type, _, encoding = head.partition(";")
    if not sep or encoding != "base64":
        raise ValueError("not a base64 data URL (data:<type>;base64,<data>)")
    return media_type, data
