import orjson
from hypothesis import given
from hypothesis import strategies as st

from app.engine.tokens import BYTES_PER_TOKEN, FILE_TOKENS, IMAGE_TOKENS, estimate_tokens

SCREENSHOT = "iVBORw0KGgo" * 50_000


def test_ascii_text_costs_a_token_per_four_characters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens([{"type": "text", "text": "a" * 400}]) == 100


def test_cjk_text_costs_about_three_quarters_of_a_token_per_character() -> None:
    assert estimate_tokens("登录失败" * 100) == 300


def test_unpaired_surrogates_do_not_break_an_estimate() -> None:
    assert estimate_tokens("a\ud800b") == 2


def test_reasoning_costs_like_text() -> None:
    assert estimate_tokens([{"type": "reasoning", "text": "a" * 40, "providerOptions": {"x": "y" * 900}}]) == 10


def test_images_and_documents_cost_a_flat_amount_not_their_encoded_size() -> None:
    assert estimate_tokens([{"type": "image", "image": SCREENSHOT, "mediaType": "image/png"}]) == IMAGE_TOKENS
    pdf = {"type": "file", "data": SCREENSHOT, "mediaType": "application/pdf"}
    assert estimate_tokens([pdf]) == FILE_TOKENS
    assert estimate_tokens([{"type": "file", "data": SCREENSHOT, "mediaType": "image/jpeg"}]) == IMAGE_TOKENS


def test_a_text_file_costs_about_its_decoded_text() -> None:
    assert estimate_tokens([{"type": "file", "data": "YWJj" * 400, "mediaType": "text/plain"}]) == 300


def test_tool_call_costs_its_name_and_its_input_json() -> None:
    part = {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "a.ts"}}
    assert estimate_tokens([part]) == 1 + 4


def test_text_tool_result_costs_its_text() -> None:
    output = {"type": "text", "value": "x" * 4_000}
    assert estimate_tokens([{"type": "tool-result", "toolCallId": "c1", "toolName": "Read", "output": output}]) == 1_000


def test_json_tool_result_costs_its_json() -> None:
    output = {"type": "json", "value": {"a": 1}}
    expected = -(-len(orjson.dumps(output)) // 4)
    assert estimate_tokens([{"type": "tool-result", "toolCallId": "c", "toolName": "T", "output": output}]) == expected


def test_screenshot_inside_a_tool_result_costs_an_image_not_its_base64() -> None:
    output = {
        "type": "content",
        "value": [
            {"type": "text", "text": "a" * 40},
            {"type": "media", "data": SCREENSHOT, "mediaType": "image/png"},
            {"type": "image-data", "data": SCREENSHOT, "mediaType": "image/png"},
            {"type": "file-data", "data": SCREENSHOT, "mediaType": "application/pdf"},
        ],
    }
    part = {"type": "tool-result", "toolCallId": "c1", "toolName": "Screenshot", "output": output}
    assert estimate_tokens([part]) == 10 + 2 * IMAGE_TOKENS + FILE_TOKENS


def test_unknown_parts_cost_their_json() -> None:
    part = {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"}
    assert estimate_tokens([part]) == -(-len(orjson.dumps(part)) // 4)


@given(st.text(st.characters(codec=None, exclude_categories=())))
def test_any_text_costs_its_utf8_bytes_over_four_the_ascii_shortcut_included(text: str) -> None:
    """ASCII text is measured by its length, without encoding it: a byte per character, like the encoding."""
    assert estimate_tokens(text) == -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN)
