"""An MCP server with a tool for every kind of result, started by the tests.

Run ``python kitchen.py`` for stdio, ``python kitchen.py http`` for streamable HTTP on a
free 127.0.0.1 port (printed as ``PORT <n>`` on stdout). Its process id is written to
the file named by ``MCP_PID_FILE``, when set, so a test can check the process is gone.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys

from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

# The smallest valid PNG (1x1, transparent).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"

app = MCPServer("kitchen", log_level="WARNING")
calls: list[str] = []
meeting: asyncio.Barrier | None = None


@app.tool(description="Says the text back.", structured_output=False)
def echo(text: str) -> str:
    calls.append("echo")
    return text


@app.tool(description="Two paragraphs, as two text blocks.", structured_output=False)
def two_paragraphs() -> list[TextContent]:
    return [TextContent(type="text", text="First."), TextContent(type="text", text="Second.")]


@app.tool(description="A picture and its caption.", structured_output=False)
def picture() -> list[object]:
    return ["A 1x1 PNG:", Image(data=PNG, format="png")]


@app.tool(description="A drawing in SVG.", structured_output=False)
def drawing() -> ImageContent:
    svg = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode()
    return ImageContent(type="image", data=svg, mime_type="image/svg+xml")


@app.tool(description="A short sound.", structured_output=False)
def sound() -> Audio:
    return Audio(data=b"RIFF0000WAVEfmt ", format="wav")


@app.tool(description="A CSV report, embedded.", structured_output=False)
def report() -> EmbeddedResource:
    contents = TextResourceContents(
        uri="file:///reports/q1.csv", mime_type="text/csv", text="region,sales\nWest,10\n"
    )
    return EmbeddedResource(type="resource", resource=contents)


@app.tool(description="A PDF, embedded.", structured_output=False)
def brochure() -> EmbeddedResource:
    blob = BlobResourceContents(
        uri="file:///docs/brochure.pdf",
        mime_type="application/pdf",
        blob=base64.b64encode(PDF).decode(),
    )
    return EmbeddedResource(type="resource", resource=blob)


@app.tool(description="A zip archive, embedded.", structured_output=False)
def archive() -> EmbeddedResource:
    blob = BlobResourceContents(
        uri="file:///backups/site.zip",
        mime_type="application/zip",
        blob=base64.b64encode(b"PK\x03\x04" + bytes(60)).decode(),
    )
    return EmbeddedResource(type="resource", resource=blob)


@app.tool(description="A link to a resource.", structured_output=False)
def link() -> ResourceLink:
    return ResourceLink(
        type="resource_link",
        name="q2.csv",
        uri="file:///reports/q2.csv",
        mime_type="text/csv",
        size=2048,
        description="Sales for Q2",
    )


@app.tool(
    description="A picture of about `kilobytes` KB (not a real PNG).", structured_output=False
)
def big_picture(kilobytes: int) -> list[object]:
    return ["The picture:", Image(data=PNG + bytes(kilobytes * 1024), format="png")]


@app.tool(description="A text report of `kilobytes` KB, embedded.", structured_output=False)
def big_report(kilobytes: int) -> EmbeddedResource:
    text = "".join(f"row {n:07d},West,10\n" for n in range(kilobytes * 1024 // 20))
    contents = TextResourceContents(uri="file:///reports/all.csv", mime_type="text/csv", text=text)
    return EmbeddedResource(type="resource", resource=contents)


@app.tool(description="A point and its double.")
def point(x: int) -> dict[str, int]:
    return {"x": x, "double": 2 * x}


@app.tool(description="Fails, saying why.")
def refuse(reason: str) -> str:
    raise ToolError(reason)


@app.tool(description="Many lines of text.", structured_output=False)
def long_text(lines: int) -> str:
    return "\n".join(f"line {n:05d} of the long text" for n in range(lines))


@app.tool(description="Exits the server mid-call.", structured_output=False)
def crash() -> str:
    os._exit(3)


@app.tool(description="Never answers.", structured_output=False)
async def hang() -> str:
    await asyncio.Event().wait()
    return "never"


@app.tool(description="Waits until eight calls are in flight at once.", structured_output=False)
async def meet(seat: int) -> str:
    global meeting
    meeting = meeting or asyncio.Barrier(8)
    await meeting.wait()
    return f"seat {seat} met the other seven"


@app.tool(description="Adds the tool `extra`.", structured_output=False)
async def grow(ctx: Context) -> str:
    def extra(a: int) -> int:
        """Returns its argument."""
        return a

    app.add_tool(extra, name="extra", structured_output=False)
    await ctx.session.send_tool_list_changed()
    return "added extra"


@app.tool(description="Removes the tool `grow`.", structured_output=False)
async def shrink(ctx: Context) -> str:
    app.remove_tool("grow")
    await ctx.session.send_tool_list_changed()
    return "removed grow"


@app.tool(
    description="Deletes every file.",
    annotations=ToolAnnotations(title="Delete everything", destructive_hint=True),
    structured_output=False,
)
def delete_everything() -> str:
    calls.append("delete_everything")
    return "deleted"


@app.tool(description="How often each tool ran.", structured_output=False)
def tally() -> str:
    return ",".join(calls) or "none"


@app.tool(name="files.read", description="Reads a file (a dotted name).", structured_output=False)
def files_read(path: str) -> str:
    return f"contents of {path}"


def main() -> None:
    pid_file = os.environ.get("MCP_PID_FILE")
    if pid_file:  # written whole, then renamed: a reader never sees it half-written
        with open(f"{pid_file}.tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(f"{pid_file}.tmp", pid_file)
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        app.run()


def serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
