"""The provider for side requests (web_fetch's answer over a long page, web_search's anthropic
backend): ``small_model`` when one is configured, the session's own otherwise."""

from __future__ import annotations

from collections.abc import Mapping

from agent.engine.outcome import SideModelSwitch
from agent.setup.config import Config
from agent.setup.model_chain import build_chain
from providers import Event, EventSink, Provider
from providers.chaos import ChaosPlan
from recovery import FallbackActivated, ModelRestored, RecoveringProvider
from recovery.fleet import Fleet


def side_provider(
    config: Config,
    environ: Mapping[str, str],
    *,
    session: RecoveringProvider,
    events: EventSink,
    fleet: Fleet,
    chaos: ChaosPlan | None = None,
) -> tuple[Provider, str | None]:
    """The provider side requests go through, and a notice when ``small_model`` cannot be
    used.

    With ``small_model`` set it is a `RecoveringProvider` (the same recovery as every call)
    over ``small_model`` and then the session's chain; its tokens count in the session's
    usage, and the requests it failed reach the session's listeners (telemetry, which tells
    each one's purpose: web_fetch, web_search). Its model switches are its own, not the
    session's: they reach the session's events as `SideModelSwitch` (telemetry counts them;
    the REPL shows them when verbose), never as the `FallbackActivated` a session records as
    its model (a resume would take them for the session's).
    """
    if not config.small_model:
        return session, None
    chain_config = config.model_copy(
        update={
            "model": config.small_model,
            "fallback_models": [str(ref) for ref in config.model_chain()],
        }
    )
    targets = build_chain(chain_config, environ, chaos, events)
    notice = None
    if str(targets[0].ref) != str(chain_config.model_chain()[0]):
        notice = (
            f"small_model {config.small_model} cannot be used (see `agent doctor`); "
            "side requests go to the session's models"
        )

    def own_switches_told_as_such(event: Event) -> None:
        if isinstance(event, FallbackActivated | ModelRestored):
            event = SideModelSwitch(switch=event)
        events(event)

    small = RecoveringProvider(
        targets, settings=config.recovery, events=own_switches_told_as_such, fleet=fleet
    )
    small.usage.subscribe_answers(session.usage.add)
    small.failures.subscribe(session.failures.relay)
    return small, notice
