"""Errors a caller can cause when asking for a provider payload; the HTTP layer renders them as 422.

Each names the field at fault, so a client can fix its request without reading prose.
"""

from collections.abc import Sequence

from app.errors import InvalidInput


class UnknownProvider(InvalidInput):
    slug, title = "unknown-provider", "Unknown provider"

    def __init__(self, provider: str, supported: Sequence[str]) -> None:
        super().__init__(
            f"unknown provider {provider!r}; supported: {', '.join(supported)}",
            field="provider",
            supported=list(supported),
        )
        self.supported = tuple(supported)


class InvalidToolDefinition(InvalidInput):
    slug, title = "invalid-tool-definition", "Invalid tool definition"

    def __init__(self, detail: str, *, index: int) -> None:
        super().__init__(detail, field=f"tools[{index}]")


class InvalidMutation(InvalidInput):
    slug, title = "invalid-mutation", "Invalid prompt mutation"

    def __init__(self, detail: str, *, index: int, field: str | None = None) -> None:
        super().__init__(detail, field=f"mutations[{index}]" + (f".{field}" if field else ""))


class MutationTargetNotFound(InvalidMutation):
    slug, title = "mutation-target-not-found", "Prompt mutation target not found"


class InvalidMaxOutputTokens(InvalidInput):
    slug, title = "invalid-max-output-tokens", "Invalid maxOutputTokens"

    def __init__(self, value: object) -> None:
        super().__init__(f"maxOutputTokens must be a positive integer, got {value!r}", field="maxOutputTokens")


class InvalidModel(InvalidInput):
    slug, title = "invalid-model", "Invalid model"

    def __init__(self, value: object) -> None:
        super().__init__(f"model must be the provider's non-empty model id, got {value!r}", field="model")


class EmptyConversation(InvalidInput):
    slug, title = "empty-conversation", "Nothing to send"

    def __init__(self) -> None:
        super().__init__(
            "the conversation has no message and no system prompt to send; append a message or add a mutation",
            field="sessionId",
        )


class InvalidVariant(InvalidInput):
    slug, title = "invalid-variant", "Invalid variant"

    def __init__(self, value: object, efforts: Sequence[str]) -> None:
        super().__init__(
            f"variant must be a reasoning effort ({', '.join(efforts)}) or a thinking budget in tokens such as "
            f"'8000', got {value!r}",
            field="variant",
        )


class InvalidFormat(InvalidInput):
    slug, title = "invalid-format", "Invalid output format"

    def __init__(self, detail: str) -> None:
        super().__init__(f"format: {detail}", field="format")


class PrefillRefused(InvalidInput):
    slug, title = "prefill-refused", "Prefill not possible"

    def __init__(self, detail: str) -> None:
        super().__init__(f"prefill: {detail}", field="prefill")
