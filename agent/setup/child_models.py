"""The provider a sub-agent whose definition names a ``model`` sends through.

``inherit`` (or no ``model``) is the parent's own recovering provider. Anything else is a
`RecoveringProvider` over that model and then the session's chain: the parent's fallback
chain is the child's too, and it shares the fleet's recovery state (retry-after, breakers,
retry budget, rate-limit headroom) with the parent and every sibling on the same key. Its
tokens count in the session's usage, and the requests it failed reach the session's listeners
(telemetry). Children on one model share its provider; what recovery does there is published
as the child's whose request it was (`agent.engine.child_requests.told_for_children`): a
fallback (or a return to its model) as `agent.engine.outcome.SubagentSwitch`, never as the
session's own `FallbackActivated`, which the session records as its model.

`ChildModels.side` builds the other model beside the session's, ``small_model`` for side
requests (`agent.setup.small_model`); ``/stats`` counts what recovery did there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from agent.engine.child_requests import told_for_children
from agent.engine.outcome import ChildId
from agent.setup.config import Config
from agent.setup.model_chain import build_chain
from agent.setup.small_model import side_provider
from agent.setup.startup import SetupError
from providers import EventSink, Notice, Provider
from providers.chaos import ChaosPlan
from providers.models import ModelRef
from recovery import RecoveringProvider, RecoveryStats
from recovery.fleet import Fleet

FAMILIES = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
    "haiku": "claude-haiku-4-5",
}
"""Claude Code's model aliases, and the Anthropic model each means when none configured is
of that family."""


def resolve_model(spec: str, configured: list[ModelRef]) -> ModelRef:
    """The model a definition's ``model`` names: ``provider:model``; a bare name (taken at
    the first configured model's provider); or ``sonnet``/``opus``/``haiku``, the first
    configured model of that family, else Anthropic's.

    Raises:
        ValueError: ``spec`` names no model; the message says what would.
    """
    text = spec.strip()
    if ":" in text:
        return ModelRef.parse(text)
    family = text.lower()
    if family in FAMILIES:
        for ref in configured:
            if family in ref.name.lower():
                return ref
        return ModelRef("anthropic", FAMILIES[family])
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"model {spec!r}: use inherit, provider:model, sonnet, opus or haiku")
    return ModelRef(configured[0].provider if configured else "anthropic", text)


class ChildModels:
    """Builds (once per model) the provider of children that name a model.

    Args:
        config: The session's configuration (its chain follows the named model).
        environ: Where keys and base URLs are read.
        session: The parent's recovering provider (``inherit``).
        events: The session's event bus.
        fleet: The recovery state shared by every agent on a key.
        chaos: The session's chaos plan, if any.
    """

    def __init__(
        self,
        config: Config,
        environ: Mapping[str, str],
        *,
        session: RecoveringProvider,
        events: EventSink,
        fleet: Fleet,
        chaos: ChaosPlan | None = None,
    ) -> None:
        self.config = config
        self.environ = environ
        self.session = session
        self.events = events
        self.fleet = fleet
        self.chaos = chaos
        self._built: dict[str, Provider] = {}
        self._side: Provider | None = None

    def side(self) -> tuple[Provider, str | None]:
        """The provider side requests go through (``small_model``'s, else the session's),
        and a notice when ``small_model`` cannot be used."""
        self._side, notice = side_provider(
            self.config,
            self.environ,
            session=self.session,
            events=told_for_children(self.events),  # a child's web_fetch: the child's retry
            fleet=self.fleet,
            chaos=self.chaos,
        )
        return self._side, notice

    def counted(self, stats: RecoveryStats) -> RecoveryStats:
        """``stats`` (the session's) with what recovery did for children on models of their
        own and for side requests on ``small_model`` added in: their requests, retries and
        fallbacks count like the parent's."""
        for other in [*self._built.values(), self._side]:
            if other is self.session or not isinstance(other, RecoveringProvider):
                continue
            theirs = other.stats()
            stats = replace(
                stats,
                requests=stats.requests + theirs.requests,
                retries=stats.retries + theirs.retries,
                fallbacks=stats.fallbacks + theirs.fallbacks,
                escalations=stats.escalations + theirs.escalations,
                stream_restarts=stats.stream_restarts + theirs.stream_restarts,
                budget_exhausted=stats.budget_exhausted + theirs.budget_exhausted,
                circuits_opened=stats.circuits_opened + theirs.circuits_opened,
                gave_up=stats.gave_up + theirs.gave_up,
                waited=stats.waited + theirs.waited,
            )
        return stats

    def provider(self, spec: str | None, child: ChildId) -> Provider:
        """The provider for ``child``, whose definition says ``model: spec`` (None: inherit);
        a notice names the child when the model cannot be used."""
        if spec is None:
            return self.session
        who = f"Sub-agent {child.agent_type}"
        configured = [*self.config.model_chain()]
        if self.config.small_model:
            configured.append(ModelRef.parse(self.config.small_model))
        try:
            ref = resolve_model(spec, configured)
        except ValueError as error:
            self.events(Notice(text=f"{who}: {error}; it uses the session's model"))
            return self.session
        if ref == self.session.current:
            return self.session
        if str(ref) not in self._built:
            self._built[str(ref)] = self._build(ref, child)
        return self._built[str(ref)]

    def _build(self, ref: ModelRef, first: ChildId) -> Provider:
        who = f"Sub-agent {first.agent_type}"
        chain = [str(ref), *(str(r) for r in self.config.model_chain() if r != ref)]
        chain_config = self.config.model_copy(
            update={"model": chain[0], "fallback_models": chain[1:]}
        )
        try:
            targets = build_chain(chain_config, self.environ, self.chaos, self.events)
        except (SetupError, ValueError) as error:
            self.events(Notice(text=f"{who}: model {ref} cannot be used ({error})"))
            return self.session
        if targets[0].ref != ref:
            self.events(
                Notice(
                    text=f"{who}: model {ref} cannot be used (see `agent doctor`); "
                    f"it uses {targets[0].ref}"
                )
            )
        child = RecoveringProvider(
            targets,
            settings=self.config.recovery,
            events=told_for_children(self.events, own=first),
            fleet=self.fleet,
        )
        child.usage.subscribe_answers(self.session.usage.add)
        child.failures.subscribe(self.session.failures.relay)
        return child
