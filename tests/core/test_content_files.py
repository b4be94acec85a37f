"""Images, PDFs and documents as content: the helpers, and what reaches the API."""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from chatlas_like import (
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentPDF,
    content_document_file,
    content_document_url,
    content_image_file,
    content_image_plot,
    content_image_url,
    content_pdf_file,
    content_pdf_url,
)
from chatlas_like.testing import Reply

from ..conftest import make_chat


def make_png(path: Path, size: tuple[int, int], image_format: str = "PNG") -> Path:
    Image.new("RGB", size, "red").save(path, format=image_format)
    return path


def decoded_size(content: ContentImageInline) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(content.data))) as image:
        return image.size


def test_resize_low_fits_a_large_image_in_512_pixels(tmp_path: Path) -> None:
    image = content_image_file(make_png(tmp_path / "big.png", (1200, 800)), resize="low")
    assert decoded_size(image) == (512, 341)
    assert image.image_content_type == "image/png"


def test_resize_high_fits_landscape_and_portrait_images(tmp_path: Path) -> None:
    wide = content_image_file(make_png(tmp_path / "wide.png", (4000, 1000)), resize="high")
    tall = content_image_file(make_png(tmp_path / "tall.png", (1000, 4000)), resize="high")
    assert decoded_size(wide) == (2000, 500)
    assert decoded_size(tall) == (500, 2000)


def test_explicit_sizes_fit_shrink_only_or_stretch(tmp_path: Path) -> None:
    path = make_png(tmp_path / "img.png", (400, 200))
    assert decoded_size(content_image_file(path, resize="100x100")) == (100, 50)
    assert decoded_size(content_image_file(path, resize="800x800>")) == (400, 200)
    assert decoded_size(content_image_file(path, resize="100x100!")) == (100, 100)


def test_an_image_within_the_size_is_sent_byte_for_byte(tmp_path: Path) -> None:
    path = make_png(tmp_path / "small.jpg", (100, 80), "JPEG")
    image = content_image_file(path, resize="low")
    assert base64.b64decode(image.data) == path.read_bytes()
    assert image.image_content_type == "image/jpeg"


def test_resize_none_sends_the_file_as_it_is(tmp_path: Path) -> None:
    path = make_png(tmp_path / "big.png", (1200, 800))
    assert base64.b64decode(content_image_file(path, resize="none").data) == path.read_bytes()


def test_bad_image_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        content_image_file(tmp_path / "missing.png")
    bmp = tmp_path / "img.bmp"
    bmp.write_bytes(b"BM")
    with pytest.raises(ValueError, match="unsupported image file extension"):
        content_image_file(bmp)
    with pytest.raises(ValueError, match="invalid resize"):
        content_image_file(make_png(tmp_path / "ok.png", (10, 10)), resize="huge")


def test_content_image_url_keeps_urls_and_inlines_data_urls() -> None:
    assert content_image_url("https://example.com/a.png") == ContentImageRemote(
        "https://example.com/a.png"
    )
    inline = content_image_url("data:image/gif;base64,R0lGOD")
    assert inline == ContentImageInline("image/gif", "R0lGOD")
    with pytest.raises(ValueError, match="unsupported image type"):
        content_image_url("data:text/plain;base64,aGk=")


def test_content_image_plot_sends_the_current_figure_as_png() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    with pytest.raises(RuntimeError, match="No matplotlib figure to save"):
        content_image_plot()
    plt.plot([1, 2, 3], [1, 4, 9])
    try:
        image = content_image_plot(width=300, height=200)
        size = plt.gcf().get_size_inches()
    finally:
        plt.close("all")
    assert image.image_content_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    assert decoded_size(image)[0] <= 300
    assert tuple(size) == (6.4, 4.8)  # the figure's own size is restored


def test_an_image_type_anthropic_cannot_read_is_refused_before_sending(serve: Any) -> None:
    server = serve([])
    chat = make_chat(server)
    heic = ContentImageInline("image/heic", "AAAA")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="image/png"):
        chat.chat("What is it?", heic, echo="none")
    assert chat.get_turns() == [] and server.message_requests() == []


def test_content_pdf_file_reads_a_pdf_and_refuses_other_files(tmp_path: Path) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.3 ...")
    assert content_pdf_file(pdf) == ContentPDF(data=b"%PDF-1.3 ...", filename="a.pdf")
    text = tmp_path / "a.txt"
    text.write_text("hi")
    with pytest.raises(ValueError, match="not a PDF"):
        content_pdf_file(text)


def test_a_pdf_url_is_fetched_by_the_provider(serve: Any) -> None:
    server = serve([Reply.text("A paper.")])
    chat = make_chat(server, cache="none")
    pdf = content_pdf_url("https://example.com/paper.pdf")
    assert pdf.filename == "paper.pdf"
    chat.chat("What is it?", pdf, echo="none")
    assert server.message_requests()[0]["messages"][0]["content"][1] == {
        "type": "document",
        "source": {"type": "url", "url": "https://example.com/paper.pdf"},
    }


def test_a_pdf_data_url_is_sent_inline() -> None:
    data = base64.b64encode(b"%PDF-1.7").decode()
    pdf = content_pdf_url(f"data:application/pdf;base64,{data}")
    assert pdf.data == b"%PDF-1.7" and pdf.url is None


def test_content_document_file_guesses_the_type_and_redirects_pdfs(tmp_path: Path) -> None:
    md = tmp_path / "notes.md"
    md.write_text("# Notes")
    assert content_document_file(md).mime_type == "text/markdown"
    code = tmp_path / "main.rs"
    code.write_text("fn main() {}")
    assert content_document_file(code).mime_type == "text/plain"
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF")
    with pytest.raises(ValueError, match="content_pdf_file"):
        content_document_file(pdf)


def test_a_binary_document_is_refused_before_it_enters_the_history(
    serve: Any, tmp_path: Path
) -> None:
    server = serve([])
    chat = make_chat(server)
    docx = tmp_path / "report.docx"
    docx.write_bytes(b"PK\x03\x04")
    document = content_document_file(
        docx, mime_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    with pytest.raises(ValueError, match="plain text or PDF"):
        chat.chat("Summarise", document, echo="none")
    assert chat.get_turns() == []


class _Document(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"region,q3\nMidwest,264\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def document_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Document)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_content_document_url_keeps_the_url_and_downloads_on_send(
    serve: Any, document_server: str
) -> None:
    url = f"{document_server}/data/sales.csv"
    document = content_document_url(url, allow_private=True)  # a loopback server
    assert document == ContentDocument(url=url, filename="sales.csv", mime_type="text/csv")
    server = serve([Reply.text("Midwest")])
    make_chat(server, cache="none").chat("Top region?", document, echo="none")
    assert server.message_requests()[0]["messages"][0]["content"][1] == {
        "type": "document",
        "title": "sales.csv",
        "source": {"type": "text", "media_type": "text/plain", "data": "region,q3\nMidwest,264\n"},
    }


def test_a_pdf_is_refused_as_a_document_and_pointed_to_the_pdf_helpers() -> None:
    with pytest.raises(ValueError, match="content_pdf_file"):
        ContentDocument(data=b"%PDF-1.4", filename="a.pdf", mime_type="application/pdf")
    with pytest.raises(ValueError, match="content_pdf_url"):
        content_document_url("data:application/pdf;base64,JVBERi0xLjQ=")


def test_content_document_url_is_built_offline() -> None:
    document = content_document_url("http://127.0.0.1:9/offline/notes.md")
    assert (document.url, document.data, document.mime_type) == (
        "http://127.0.0.1:9/offline/notes.md",
        None,
        "text/markdown",
    )


def test_a_document_that_cannot_be_downloaded_fails_before_sending(serve: Any) -> None:
    server = serve([Reply.text("never")])
    chat = make_chat(server)
    with pytest.raises(ValueError, match=r"could not download http://127\.0\.0\.1:9/gone\.txt"):
        chat.chat("Read it", content_document_url("http://127.0.0.1:9/gone.txt"), echo="none")
    assert server.message_requests() == []
    assert chat.get_turns() == []


@pytest.mark.parametrize(
    ("name", "mime_type"),
    [
        ("notes.yaml", "text/plain"),
        ("report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("table.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("letter.rtf", "application/rtf"),
        ("old.doc", "application/msword"),
        ("sheet.xls", "application/vnd.ms-excel"),
        ("draft.odt", "application/vnd.oasis.opendocument.text"),
    ],
)
def test_document_media_types_match_chatlas(tmp_path: Path, name: str, mime_type: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"x")
    assert content_document_file(path).mime_type == mime_type


def test_heic_images_are_accepted_and_refused_by_anthropic_before_sending(
    tmp_path: Path, serve: Any
) -> None:
    path = tmp_path / "photo.heic"
    path.write_bytes(b"not really heic")
    image = content_image_file(path, resize="none")
    assert image.image_content_type == "image/heic"
    heif = content_image_url(f"data:image/heif;base64,{base64.b64encode(b'x').decode()}")
    assert isinstance(heif, ContentImageInline) and heif.image_content_type == "image/heif"
    server = serve([Reply.text("never")])
    with pytest.raises(ValueError, match="not image/heic"):
        make_chat(server).chat("What is this?", image, echo="none")
    assert server.message_requests() == []


def test_a_data_url_document_is_named_for_its_media_type_not_its_payload() -> None:
    document = content_document_url("data:text/csv;base64,YSxiCjEsMgo=")
    assert document.filename.endswith(".csv") and "YSxi" not in document.filename


def test_content_document_url_takes_data_urls_and_refuses_pdfs() -> None:
    data = base64.b64encode(b"hello").decode()
    document = content_document_url(f"data:text/plain;base64,{data}")
    assert (document.data, document.mime_type) == (b"hello", "text/plain")
    with pytest.raises(ValueError, match="content_pdf_url"):
        content_document_url("https://example.com/paper.pdf")
