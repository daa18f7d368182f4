"""The service's settings mapped onto the context layer's plain configuration values."""

from app.context.config import (
    ModelServer,
    PrunePolicy,
    SummarizerConfig,
    TailPolicy,
    ThresholdPolicy,
    Timeouts,
    WindowConfig,
)
from app.settings import ModelServerSetting, Settings


def _server(setting: ModelServerSetting) -> ModelServer:
    return ModelServer(
        base_url=setting.base_url, api_key=setting.api_key.get_secret_value() if setting.api_key else None
    )


def window_config(settings: Settings) -> WindowConfig:
    return WindowConfig(
        servers_by_model={key: _server(value) for key, value in settings.model_servers_by_model.items()},
        servers_by_provider={key: _server(value) for key, value in settings.model_servers_by_provider.items()},
        context_window_tokens=dict(settings.context_windows),
        ttl_seconds=settings.window_cache_seconds,
        timeouts=Timeouts(
            connect_seconds=min(1.0, settings.model_server_timeout_seconds),
            read_seconds=settings.model_server_timeout_seconds,
            total_seconds=settings.model_server_timeout_seconds,
        ),
    )


def threshold_policy(settings: Settings) -> ThresholdPolicy:
    return ThresholdPolicy(
        ratio=settings.compaction_threshold_ratio, reserved_output_tokens=settings.compaction_reserved_output_tokens
    )


def tail_policy(settings: Settings) -> TailPolicy:
    return TailPolicy(max_tokens=settings.compaction_tail_tokens)


def prune_policy(settings: Settings) -> PrunePolicy:
    return PrunePolicy(
        protect_user_turns=settings.prune_protect_user_turns,
        protect_tool_tokens=settings.prune_protect_tool_tokens,
        minimum_savings_tokens=settings.prune_minimum_savings_tokens,
        protected_tool_names=frozenset(settings.prune_protected_tools),
    )


def summarizer_config(settings: Settings) -> SummarizerConfig | None:
    if not settings.summarizer_base_url or not settings.summarizer_model:
        return None
    key = settings.summarizer_api_key.get_secret_value() if settings.summarizer_api_key else None
    return SummarizerConfig(
        server=ModelServer(settings.summarizer_base_url, key),
        model=settings.summarizer_model,
        context_window_tokens=settings.summarizer_context_window_tokens,
    )
