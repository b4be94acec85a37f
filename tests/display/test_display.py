"""How chats, turns and content look in notebooks (HTML, Markdown) and as htmltools tags."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolResult,
    ContentUnknown,
    Deny,
    UserTurn,
)
from chatlas_like._display.render import prose_html
from chatlas_like.testing import Reply

from ..conftest import make_chat

SCRIPT = "<script>alert(1)</script>"
CALL = ContentToolRequest(id="toolu_1", name="lookup", arguments={"city": "Paris"})


def result(outcome: str, **changes: Any) -> ContentToolResult:
    if outcome == "success":
        return ContentToolResult(value=changes.pop("value", "sunny"), request=CALL, **changes)
    return ContentToolResult(error="it broke", outcome=outcome, request=CALL, **changes)  # type: ignore[arg-type]


EVERY_CONTENT = [
    ContentText("Hello **world**"),
    ContentJson({"a": 1}),
    ContentImageInline("image/png", "iVBORw0KGgo="),
    ContentImageRemote("https://example.invalid/cat.png"),
    ContentPDF(data=b"%PDF-1.4", filename="report.pdf"),
    ContentDocument(data=b"a,b\n1,2", filename="data.csv", mime_type="text/csv"),
    ContentThinking("Let me think."),
    CALL,
    ContentServerToolRequest(id="srv_1", name="web_search", arguments={"q": "x"}, block={}),
    ContentServerToolResult(tool_use_id="srv_1", block={"type": "web_search_tool_result"}),
    ContentUnknown({"type": "brand_new_block"}),
    result("success"),
    result("error"),
    result("exception"),
    result("refused"),
    result("denied"),
]


@pytest.mark.parametrize("content", EVERY_CONTENT, ids=lambda c: type(c).__name__)
def test_every_content_type_has_html_and_markdown(content: Any) -> None:
    assert content._repr_html_().strip()
    assert content._repr_markdown_().strip()


@pytest.mark.parametrize(
    ("outcome", "label", "opened"),
    [
        ("success", "✔ result", False),
        ("error", "✖ error", True),
        ("exception", "✖ exception", True),
        ("refused", "⊘ refused", True),
        ("denied", "⊘ denied", False),
    ],
)
def test_a_result_card_marks_its_outcome(outcome: str, label: str, opened: bool) -> None:
    card = result(outcome)._repr_html_()
    assert card.startswith("<details")
    assert f"outcome-{outcome}" in card
    assert label in card
    assert ("open " in card.split(">", 1)[0]) is opened
    assert "lookup(city=&quot;Paris&quot;)" in card


def test_a_result_card_shows_the_tool_arguments_and_preview() -> None:
    card = result("success", value={"temperature": 21})._repr_html_()
    assert "<summary" in card and "arguments" in card
    assert "&quot;city&quot;: &quot;Paris&quot;" in card
    assert "{&quot;temperature&quot;:21}" in card


def test_a_result_holding_script_renders_as_text() -> None:
    bad_call = ContentToolRequest(id="t", name=SCRIPT, arguments={SCRIPT: SCRIPT})
    card = ContentToolResult(value=SCRIPT, request=bad_call)
    for rendered in (card._repr_html_(), str(card.tagify()), bad_call._repr_html_()):
        assert "<script" not in rendered
        assert "&lt;script&gt;" in rendered


def test_model_prose_with_raw_html_is_escaped_in_html() -> None:
    rendered = ContentText(f"**bold** {SCRIPT} [x](javascript:alert)")._repr_html_()
    assert "<strong>bold</strong>" in rendered
    assert "<script" not in rendered
    assert "href" not in rendered


def test_a_markdown_image_in_model_prose_is_shown_as_text_not_fetched() -> None:
    rendered = prose_html("see ![x](https://attacker.example/leak)")
    assert "<img" not in rendered
    assert "[image: x] https://attacker.example/leak" in rendered


def test_a_truncated_result_is_labelled() -> None:
    cut = result("success", original_length=668_000, stored_length=100_000, is_truncated=True)
    assert "cut for the model: 100,000 of 668,000 bytes sent" in cut._repr_html_()
    assert "cut for the model" in cut._repr_markdown_()


def test_a_huge_result_is_cut_before_it_is_shown() -> None:
    huge = result("success", value="x" * 1_000_000)
    assert len(huge._repr_html_()) < 5_000
    assert "998,000 more characters" in huge._repr_markdown_()


def test_markdown_fences_survive_backticks_in_a_result() -> None:
    tricky = result("success", value="```\nnot the end\n```")._repr_markdown_()
    fences = re.findall(r"^`{3,}$", tricky, flags=re.MULTILINE)
    assert fences[0] == fences[-1] == "````"


def test_a_turn_displays_its_role_and_contents() -> None:
    turn = AssistantTurn([ContentText("Checking."), CALL])
    assert "role-assistant" in turn._repr_html_()
    assert "chatlas-like-tool-request" in turn._repr_html_()
    assert turn._repr_markdown_().startswith("**assistant**")
    assert "outcome-error" in UserTurn([result("error")])._repr_html_()


def lookup(city: str) -> str:
    """Looks up the weather."""
    return f"{SCRIPT} sunny in {city}"


def broken(city: str) -> str:
    """Always fails."""
    raise RuntimeError("the weather service is down")


def test_a_chat_displays_every_turn_with_one_card_per_call(serve: Any) -> None:
    server = serve(
        [
            Reply.tool_calls(
                [("lookup", {"city": "Paris"}), ("broken", {"city": "Rome"})],
                text="Let me look.",
            ),
            Reply.text("Paris is **sunny**."),
        ]
    )
    chat = make_chat(server, system_prompt="Be terse.")
    chat.register_tool(lookup)
    chat.register_tool(broken)
    chat.chat("Weather?", echo="none")
    page = chat._repr_html_()
    assert page.count("chatlas-like-tool-result") == 2
    assert "chatlas-like-tool-request" not in page  # shown by the result cards instead
    assert "outcome-exception" in page
    assert "Tool call failed with error: &#x27;the weather service is down&#x27;" in page
    assert "<strong>sunny</strong>" in page and "Be terse." in page
    assert "<script" not in page
    text = chat._repr_markdown_()
    assert text.startswith("**Chat** · Anthropic/")
    assert '**✖ exception** `broken(city="Rome")`' in text


def test_a_denied_call_is_marked_but_not_an_error(serve: Any) -> None:
    server = serve([Reply.tool_call("lookup", {"city": "Paris"}), Reply.text("OK.")])
    chat = make_chat(server)
    chat.register_tool(lookup)
    chat.on_tool_review(lambda request: Deny("not today"))
    chat.chat("Weather?", echo="none")
    card = chat.get_turns()[2].tool_results[0]._repr_html_()
    assert "⊘ denied" in card and "not today" in card
    assert "outcome-denied" in card


def test_an_assistant_turn_holding_only_a_tool_call_renders_no_empty_heading(serve: Any) -> None:
    server = serve([Reply.tool_call("lookup", {"city": "Paris"}), Reply.text("Sunny.")])
    chat = make_chat(server)
    chat.register_tool(lookup)
    chat.chat("Weather?", echo="none")
    assert chat._repr_html_().count("🤖 assistant") == 1  # the answer's; the call is a card
    assert chat._repr_markdown_().count("🤖 assistant") == 1


def sales(rows: int) -> Any:
    import pandas as pd

    return pd.DataFrame({"region": [f"r{i}" for i in range(rows)], "q3": range(rows)})


def test_a_dataframe_result_shows_as_a_table_with_what_the_model_read_one_click_away() -> None:
    card = result("success", value=sales(4))._repr_html_()
    table, read = card.split("<details class='chatlas-like-preview'>")
    assert '<table class="dataframe chatlas-like-dataframe">' in table
    assert "<td>r3</td>" in table and "4 rows · 2 columns" in table
    assert read.startswith("<summary") and "what the model read" in read
    assert "&quot;region&quot;:&quot;r0&quot;" in read  # the records, as the model read them


def test_a_dataframe_table_shows_its_first_rows_and_counts_the_rest() -> None:
    card = result("success", value=sales(250))._repr_html_()
    table = card.split("<details class='chatlas-like-preview'>")[0]
    assert "<td>r9</td>" in table and "<td>r10</td>" not in table
    assert "first 10 of 250 rows · 2 columns" in table


def test_a_dataframe_table_escapes_its_labels_index_and_cells() -> None:
    import pandas as pd

    hostile = pd.DataFrame(
        {SCRIPT: ["<img src=x onerror=alert(1)>"]}, index=pd.Index(["<b>i</b>"], name=SCRIPT)
    )
    card = result("success", value=hostile)._repr_html_()
    assert "<script" not in card and "<img" not in card and "<b>i" not in card
    assert "&lt;img src=x onerror=alert(1)&gt;" in card


def test_a_failed_call_or_another_value_keeps_the_plain_preview() -> None:
    for card in (result("error")._repr_html_(), result("success", value=[1, 2])._repr_html_()):
        assert "chatlas-like-dataframe" not in card
        assert "<div class='chatlas-like-preview'>" in card


def test_str_of_a_tool_request_and_result_is_chatlas_text() -> None:
    request = ContentToolRequest(id="123", name="get_weather", arguments={"city": "NYC"})
    result = ContentToolResult(value={"temp": 72}, request=request)
    assert str(request) == '```python\n# 🔧 tool request (123)\nget_weather(city="NYC")\n```\n'
    assert str(result) == "```python\n# ✅ tool result (123)\n{'temp': 72}\n```"
    assert "✅ tool result (123)" in repr(UserTurn([result]))  # as chatlas's repr(turn)


def test_str_of_thinking_and_of_structured_data_is_chatlas_text() -> None:
    assert str(ContentThinking("Plan: add them.")) == "<thinking>\nPlan: add them.\n</thinking>\n"
    assert str(ContentJson({"n": 4})) == '```json\n{\n  "n": 4\n}\n```'


def test_str_of_a_citation_and_a_search_request_is_chatlas_text() -> None:
    from chatlas_like import ContentToolRequestSearch
    from chatlas_like._core.content import ContentCitation

    assert str(ContentCitation(grounded_span="It is 4.")) == "**citation**: It is 4."
    assert ContentCitation(grounded_span="It is 4.")._repr_markdown_() == (
        "**citation**: `It is 4.`"
    )
    request = ContentToolRequestSearch(query="ggplot2 release")
    assert request._repr_markdown_() == "**web search request**: 'ggplot2 release'"


def test_redacted_thinking_renders_as_a_note_not_an_empty_block() -> None:
    redacted = ContentThinking("", extra={"type": "redacted_thinking", "data": "opaque"})
    assert redacted._repr_markdown_() == "*thinking (redacted by the provider)*"


def test_thinking_renders_as_an_escaped_tag_for_shiny() -> None:
    html = str(ContentThinking("<b>plan</b>").tagify())
    assert "<details" in html and "&lt;b&gt;plan&lt;/b&gt;" in html


def test_a_pdf_shows_its_label_once_in_markdown_and_in_html() -> None:
    pdf = ContentPDF(data=b"%PDF-1.4", filename="a.pdf")
    assert pdf._repr_markdown_() == "`[PDF a.pdf · 8 B]`"
    assert "<code>[PDF a.pdf · 8 B]</code>" in pdf._repr_html_()


def test_to_display_markdown_cuts_the_value_to_max_lines_as_chatlas_does() -> None:
    request = ContentToolRequest(id="123", name="log", arguments={})
    result = ContentToolResult(value="\n".join(f"line {i}" for i in range(5)), request=request)
    assert result.to_display_markdown() == str(result)
    assert result.to_display_markdown(max_lines=2) == (
        "```python\n# ✅ tool result (123)\nline 0\nline 1\n# … 3 more lines\n```"
    )


def test_str_of_a_failed_result_says_what_the_model_read_as_chatlas_does() -> None:
    failed = ContentToolResult(error=ValueError("Test error"), request=CALL)
    assert str(failed).startswith("```python\n# ❌ tool error (toolu_1)\n")
    assert "Tool call failed with error" in str(failed)


def test_to_html_is_chatlas_markup_escaped() -> None:
    request = ContentToolRequest(id="t", name=SCRIPT, arguments={"<b>k</b>": SCRIPT})
    html = ContentToolResult(value=SCRIPT, request=request).to_html()
    assert html.startswith('<div class="chatlas-tool-result"><details><summary>Result from')
    assert "<strong>Input parameters:</strong>" in html and "input-parameter-label" in html
    assert "<script" not in html and "<b>" not in html
    failed = ContentToolResult(error=ValueError("no"), request=CALL).to_html()
    assert "❌ Failed to call tool <code>lookup</code>" in failed


def test_str_of_a_result_not_yet_attached_to_its_request_does_not_raise() -> None:
    assert str(ContentToolResult(value=[1, 2])) == "```python\n# ✅ tool result\n[1, 2]\n```"


def test_a_kernel_shell_subclassing_jupyters_counts_as_a_notebook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types

    from chatlas_like._display.sinks import in_notebook

    class ZMQInteractiveShell:  # Jupyter's kernel shell, by name
        pass

    class Shell(ZMQInteractiveShell):  # Colab's subclasses it
        pass

    fake = types.SimpleNamespace(get_ipython=Shell)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert in_notebook()
