"""Hypothesis strategies for whole session histories, shared by projection and provider property tests.

A history is what a real store could hold after agents misbehave: interrupted tool calls, orphan and
duplicate results, reused tool-call ids, empty and whitespace texts, compactions complete and incomplete
(opencode's assistant summaries among them), reasoning from other providers with signatures, provider item ids
and thought signatures on text and calls, the calls and results of tools a provider ran itself (whole, or
with half missing), assistant files, keys a newer SDK added, producers named in every form (``provider`` and
``model``, ``provider/modelId``, opencode's object, or only by their run: ``RUN_MODELS``), images in tool
results, cache marks an AI SDK app stored on user texts and tool results, runtime reminders (also between a
call and its result), bash executions and custom messages, and the visibility flags. Messages are numbered as
the store numbers them (seq 1..n, ids ``m<seq>``), so a boundary's ``compactThroughMessageId`` and a
summary's ``summaryForBoundaryId`` name real messages.
"""

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from app.engine.kinds import Role
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.types import ProjectionContext
from tests import builders as b

PROVIDER_MODELS: tuple[tuple[str, str], ...] = (
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-1"),
    ("google", "gemini-2.5-pro"),
    ("openai", "gpt-5"),
)
RUN_MODELS: dict[str, object] = {
    "run_anthropic/claude-sonnet-4-5": "anthropic/claude-sonnet-4-5",
    "run_anthropic/claude-opus-4-1": {"providerID": "anthropic", "modelID": "claude-opus-4-1"},
    "run_google/gemini-2.5-pro": "google/gemini-2.5-pro",
    "run_openai/gpt-5": {"providerID": "openai", "modelID": "gpt-5", "variant": "high"},
}
"""The runs a history's assistant messages may name instead of their model, as a store holds their models."""

texts = st.sampled_from(
    [
        "",
        " ",
        "\n\t ",
        "ok",
        "Read the file",
        "帮我看看 src/auth.ts",
        "emoji 🙂 outside the BMP",
        "x" * 90,
        "half an emoji \ud83d",
        "\x00",
    ]
)
"""Short texts, often empty or whitespace-only; sampled rather than generated, which keeps histories cheap.
Some hold what the store keeps exactly and providers may refuse: an unpaired surrogate, a lone NUL (which is
whitespace to no one, so a NUL-only text becomes empty only once cleaned)."""

outputs = st.sampled_from(
    [
        "",
        "   ",
        "line 1\nline 2",
        "x" * 120,
        "error: ENOENT",
        "`backticks` ```fenced```",
        "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "cut at 4096 bytes \udc00",
    ]
)
"""Tool output texts: empty, whitespace, normal, long enough to cross a small soft limit, and binary."""

tool_names = st.sampled_from(["Read", "Bash", "Grep", "Edit", "functions.Bash:0", "mcp server/tool"])
"""Tool names as histories hold them, the last two as runtimes write them that no provider takes."""

# Strategies are built once: building them inside every draw costs more than drawing from them.
_COIN = st.booleans()
_ONE_IN_FOUR = st.integers(0, 3)
_ONE_IN_FIVE = st.integers(0, 4)
_ONE_IN_SIX = st.integers(0, 5)
_ONE_IN_EIGHT = st.integers(0, 7)
_ONE_IN_TEN = st.integers(0, 9)
_INDEX = st.integers(0, 1_000)
_LINES = st.integers(0, 500)
_CALL_COUNT = st.integers(1, 3)
_PRODUCERS = st.sampled_from(PROVIDER_MODELS)
_FINISH = st.sampled_from(["stop", "length", "error", "aborted"])
_SIGNATURE = st.sampled_from([None, b.SIGNATURE])
_MAYBE_TEXT = st.one_of(st.none(), texts)
_RESULT_SHAPES = st.sampled_from(["text", "text", "json", "error-text", "content", "denied"])
_SUMMARY_TEXTS = st.sampled_from(["Earlier we fixed the login bug.", "Summary.", "", "  ", None])
_SUMMARY_ROLES: st.SearchStrategy[Role] = st.sampled_from(["user", "system"])
_RUNTIME_CHOICES = st.sampled_from(
    ["system", "reminder", "handoff", "branch", "switch", "model_switch", "bash", "custom", "approval"]
)
_EXIT_CODES = st.sampled_from([0, 1, None])
_OUTPUT_PATHS = st.sampled_from([None, "/tmp/out.txt"])
_CUSTOM_CONTENT = st.one_of(texts, st.just([b.text_part("extension says hi")]))
_STEPS = st.sampled_from(["user", "user", "assistant", "tool", "tool", "orphan", "compaction", "runtime", "runtime"])
_PART_OPTIONS = st.sampled_from(
    [None, None, None, {"openai": {"itemId": "msg_1"}}, {"google": {"thoughtSignature": "c2lnbmVk"}}]
)
"""Provider state on a text or call part, bound to the model that wrote it like a reasoning signature."""
_STORED_MARKS = st.sampled_from(
    [
        None,
        None,
        None,
        {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        {"anthropic": {"cache_control": {"type": "ephemeral", "ttl": "5m"}}, "openai": {"note": "kept"}},
    ]
)
"""A cache mark an AI SDK app wrote on a part it stored (as it sent it): the marks are the service's to place."""


_PRODUCER_FORMS = st.sampled_from(["fields", "fields", "reference", "object", "run"])
_NEWER_KEYS = st.sampled_from([None, None, None, None, {"newSdkField": {"v": 1}}])
"""A key no part declares, as a newer SDK writes it: stored, never sent."""


def _with_options(part: dict[str, Any], options: dict[str, Any] | None) -> dict[str, Any]:
    return part if options is None else {**part, "providerOptions": options}


def _with_extra(part: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    return part if extra is None else {**part, **extra}


def _produced(draw: st.DrawFn, provider: str, model: str) -> dict[str, Any]:
    """An assistant message's producer, written in one of the forms runtimes write it (keyword arguments of
    ``b.assistant``: metadata, plus ``run_id`` when only its run names the model)."""
    match draw(_PRODUCER_FORMS):
        case "reference":
            return {"model": f"{provider}/{model}"}
        case "object":
            return {"model": {"providerID": provider, "modelID": model}}
        case "run":
            return {"run_id": f"run_{provider}/{model}"}
        case _:
            return {"provider": provider, "model": model}


_EXECUTED = st.sampled_from(["none", "none", "none", "whole", "whole", "call-only", "result-only"])


def _executed(draw: st.DrawFn, provider: str, call_id: str) -> list[dict[str, Any]]:
    """The call and result of a tool the provider ran (in the AI SDK's form for that provider), or half of it."""
    shape = draw(_EXECUTED)
    if shape == "none":
        return []
    executed_id = f"srv_{call_id}"
    if provider == "anthropic":
        name, given = "web_search", {"query": "news"}
        value: Any = [{"type": "web_search_result", "url": "https://x.dev", "title": "X", "encryptedContent": "e"}]
    elif provider == "google":
        name, given, value = "code_execution", {"language": "PYTHON", "code": "print(1)"}, {"outcome": "OUTCOME_OK"}
    else:
        name, given, value = "web_search", {}, {"status": "completed"}
    options = {"openai": {"itemId": f"ws_{call_id}"}} if provider == "openai" else None
    call = _with_options(
        {"type": "tool-call", "toolCallId": executed_id, "toolName": name, "input": given, "providerExecuted": True},
        options,
    )
    result = {
        "type": "tool-result",
        "toolCallId": executed_id,
        "toolName": name,
        "output": {"type": "json", "value": value},
        "providerExecuted": True,
    }
    return {"whole": [call, result], "call-only": [call], "result-only": [result]}[shape]


@st.composite
def _flags(draw: st.DrawFn) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    if draw(_ONE_IN_TEN) == 0:
        flags["eligibleForModelContext"] = False
    if draw(_ONE_IN_TEN) == 0:
        flags["visibleInTranscript"] = False
    return flags


_IMAGES = st.sampled_from(
    [
        ("iVBORw0KGgo=", "image/png"),
        ("iVBORw0KGgo=", "image/jpeg"),
        ("iVBORw0KGgo=", None),
        ("R0lGODlhAQABAAAAACw=", "image/gif"),
        ("Qk0eAAAAAAAAABoAAAAMAAAA", None),
        ("PHN2Zz4=", "image/svg+xml"),
    ]
)
"""Images as runtimes store them: labelled right, labelled as another type than their bytes, unlabelled, and
of types some providers cannot read."""


@st.composite
def _user_turn(draw: st.DrawFn) -> list[PersistedMessage]:
    text = draw(texts)
    if draw(_COIN):
        return [b.user(text, **draw(_FLAGS))]
    parts = [_with_options(b.text_part(text), draw(_STORED_MARKS))]
    if draw(_COIN):
        parts.append(b.image_part(*draw(_IMAGES)))
    if draw(_ONE_IN_FIVE) == 0:
        parts.append(b.file_part())
    return [b.user(parts, **draw(_FLAGS))]


@st.composite
def _assistant_turn(draw: st.DrawFn) -> list[PersistedMessage]:
    provider, model = draw(_PRODUCERS)
    finish = draw(_FINISH)
    produced = _produced(draw, provider, model)
    if draw(_COIN):
        return [b.assistant(draw(texts), finishReason=finish, **produced)]
    parts = [b.reasoning_part(draw(texts), signature=draw(_SIGNATURE), provider=provider)]
    answer = draw(_MAYBE_TEXT)
    if answer is not None:
        parts.append(_with_extra(b.text_part(answer), draw(_NEWER_KEYS)))
    if draw(_ONE_IN_SIX) == 0:
        parts.append(b.file_part("iVBORw0KGgo=", "image/png", filename=None))
    return [b.assistant(parts, finishReason=finish, **produced)]


@st.composite
def _result_part(draw: st.DrawFn, call_id: str, tool_name: str) -> dict[str, Any]:
    shape = draw(_RESULT_SHAPES)
    match shape:
        case "json":
            return b.result_part(call_id, {"lines": draw(_LINES)}, tool_name=tool_name, output_type="json")
        case "content":
            value = [{"type": "text", "text": draw(outputs)}]
            if draw(_COIN):
                value.append(b.media_item())
            return b.result_part(call_id, value, tool_name=tool_name, output_type="content")
        case "denied":
            denied = {"type": "execution-denied", "reason": "User denied"}
            return b.result_part(call_id, tool_name=tool_name, output=denied)
        case _:
            part = b.result_part(call_id, draw(outputs), tool_name=tool_name, output_type=shape)
            return _with_options(part, draw(_STORED_MARKS))


@st.composite
def _tool_round(draw: st.DrawFn, call_ids: list[str]) -> list[PersistedMessage]:
    """An assistant turn with calls, then results for some of them, in one or several tool messages."""
    count = draw(_CALL_COUNT)
    calls: list[tuple[str, str]] = []
    for _ in range(count):
        reuse = call_ids and draw(_ONE_IN_TEN) == 0
        call_id = call_ids[draw(_INDEX) % len(call_ids)] if reuse else f"call_{len(call_ids) + 1}"
        call_ids.append(call_id)
        calls.append((call_id, draw(tool_names)))
    parts: list[dict[str, Any]] = []
    provider, model = draw(_PRODUCERS)
    if draw(_COIN):
        parts.append(b.reasoning_part(draw(texts), signature=b.SIGNATURE, provider=provider))
    parts.extend(_executed(draw, provider, calls[0][0]))
    if draw(_COIN):
        parts.append(_with_options(b.text_part(draw(texts)), draw(_PART_OPTIONS)))
    parts.extend(
        _with_extra(_with_options(b.call_part(call_id, name, {"path": "a.ts"}), draw(_PART_OPTIONS)), draw(_NEWER_KEYS))
        for call_id, name in calls
    )
    messages = [b.assistant(parts, **_produced(draw, provider, model))]
    if draw(_ONE_IN_SIX) == 0:
        messages.append(b.reminder("Remember the plan."))
    answered = [call for call in calls if draw(_ONE_IN_SIX) > 0]  # the rest were interrupted
    together_in_one = draw(_COIN)
    if answered and together_in_one:
        together = [draw(_result_part(call_id, name)) for call_id, name in answered]
        messages.append(b.tool_results(*together, **draw(_PRUNED)))
    else:
        for call_id, name in answered:
            messages.append(b.tool_results(draw(_result_part(call_id, name)), **draw(_PRUNED)))
    if answered and draw(_ONE_IN_EIGHT) == 0:
        call_id, name = answered[0]
        messages.append(b.tool_result(call_id, "again", tool_name=name))  # a duplicate result
    return messages


@st.composite
def _pruned(draw: st.DrawFn) -> dict[str, Any]:
    return {"compactedAt": b.COMPACTED_AT} if draw(_ONE_IN_FOUR) == 0 else {}


@st.composite
def _compaction(draw: st.DrawFn, count_before: int) -> list[PersistedMessage]:
    """A boundary with a summary that is complete, empty, whitespace or missing; maybe a kept tail."""
    boundary_id = f"m{count_before + 1}"
    through = None
    if count_before and draw(_COIN):
        through = f"m{draw(_INDEX) % count_before + 1}"
    opencode = draw(_ONE_IN_FOUR) == 0
    if opencode:
        # opencode's way: the compaction request is a user turn, the summary the assistant's answer to it.
        messages = [b.boundary(boundary_id, through=through, text="What did we do so far?", role="user")]
    else:
        messages = [b.boundary(boundary_id, through=through)]
    summary_text = draw(_SUMMARY_TEXTS)
    if summary_text is not None and opencode:
        mark = {"summary": True} if draw(_COIN) else {"result": {"kind": "summary"}}
        messages.append(b.assistant(summary_text, parentID=boundary_id, **mark))
    elif summary_text is not None:
        role = draw(_SUMMARY_ROLES)
        messages.append(b.summary(boundary_id, summary_text, role=role))
    return messages


@st.composite
def _runtime_record(draw: st.DrawFn) -> list[PersistedMessage]:
    choice = draw(_RUNTIME_CHOICES)
    match choice:
        case "system":
            return [b.system(draw(texts))]
        case "reminder":
            return [b.reminder(draw(texts))]
        case "handoff":
            return [b.handoff("Handed off: " + draw(texts))]
        case "branch":
            return [b.branch_summary("Tried another approach: " + draw(texts))]
        case "switch":
            return [b.agent_switch("Switched to plan", as_reminder=draw(_COIN))]
        case "model_switch":
            return [b.model_switch("Model changed to openai/gpt-5", as_reminder=draw(_COIN))]
        case "bash":
            return [
                b.bash(
                    "ls",
                    draw(outputs),
                    exit_code=draw(_EXIT_CODES),
                    cancelled=draw(_COIN),
                    truncated=draw(_COIN),
                    full_output_path=draw(_OUTPUT_PATHS),
                    exclude=draw(_COIN),
                )
            ]
        case "custom":
            content = draw(_CUSTOM_CONTENT)
            return [b.custom(content, display=draw(_COIN), display_only=draw(_COIN))]
        case "approval":
            return [
                b.approval_request("a1", "call_1"),
                b.approval_response("a1", approved=draw(_COIN)),
            ]
        case _:
            raise AssertionError(choice)


_FLAGS = _flags()
_PRUNED = _pruned()
_USER_TURN = _user_turn()
_ASSISTANT_TURN = _assistant_turn()
_RUNTIME_RECORD = _runtime_record()


@st.composite
def histories(draw: st.DrawFn, *, max_steps: int = 14) -> list[PersistedMessage]:
    """A whole session history, numbered as stored (seq 1..n, ids ``m<seq>``)."""
    messages: list[PersistedMessage] = []
    call_ids: list[str] = []
    for _ in range(draw(st.integers(0, max_steps))):  # one strategy per history, not per step
        messages += _step(draw, draw(_STEPS), len(messages), call_ids)
    numbered = b.history(*messages)
    # ids are m<seq> everywhere, so the boundary ids chosen above (m<position>) are the ids it really has.
    return [replace(message, id=f"m{message.seq}") for message in numbered]


_GROWING_STEPS = st.sampled_from(["user", "user", "assistant", "tool", "tool", "tool", "orphan", "runtime"])


@st.composite
def grown_histories(
    draw: st.DrawFn, *, max_steps: int = 10, max_turns: int = 8
) -> tuple[list[PersistedMessage], list[int]]:
    """A history and how it grew: a random history, then turns appended one batch at a time as an agent
    appends them (no compaction, no prune). Returns the numbered messages and the length after each batch,
    the first being the random history's own length."""
    messages: list[PersistedMessage] = list(draw(histories(max_steps=max_steps)))
    cuts = [len(messages)]
    call_ids = [f"call_{n}" for n in range(1, len(messages) + 1)]
    for _ in range(draw(st.integers(1, max_turns))):
        messages += _step(draw, draw(_GROWING_STEPS), len(messages), call_ids)
        cuts.append(len(messages))
    numbered = b.history(*messages)
    return [replace(message, id=f"m{message.seq}") for message in numbered], cuts


def _step(draw: st.DrawFn, step: str, count: int, call_ids: list[str]) -> list[PersistedMessage]:
    """The messages one step of a history appends."""
    messages: list[PersistedMessage] = []
    match step:
        case "user":
            messages += draw(_USER_TURN)
        case "assistant":
            messages += draw(_ASSISTANT_TURN)
        case "tool":
            messages += draw(_tool_round(call_ids))
        case "orphan":
            messages.append(b.tool_result("call_orphan", "nobody asked"))
        case "compaction":
            messages += draw(_compaction(count))
        case "runtime":
            messages += draw(_RUNTIME_RECORD)
        case _:
            raise AssertionError(step)
    return messages


def engine_histories(*, max_steps: int = 14) -> st.SearchStrategy[list[EngineMessage]]:
    return histories(max_steps=max_steps).map(lambda messages: [promote(message) for message in messages])


@st.composite
def contexts(draw: st.DrawFn) -> ProjectionContext:
    """The projection parameters a request may give: target model, reasoning, results, limits and media."""
    provider, model = draw(st.sampled_from([(None, None), *PROVIDER_MODELS]))
    return ProjectionContext(
        provider=provider,
        model=model,
        include_reasoning=draw(st.booleans()),
        reasoning_fallback=draw(st.sampled_from(["drop", "text"])),
        include_tool_results=draw(st.integers(0, 4)) > 0,
        tool_result_soft_limit_chars=draw(st.sampled_from([0, 50, 50_000])),
        apply_compact_boundary=draw(st.integers(0, 4)) > 0,
        inject_runtime_reminder=draw(st.booleans()),
        readable_media=draw(st.sampled_from([None, (), ("image/*",)])),
        run_models=RUN_MODELS,
    )
