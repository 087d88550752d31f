"""Session config options (``configOptions``): the mode and the model, as an editor's menus.

The mode menu is `agent.acp.modes`' modes (``session/set_mode`` switches the same state). The
model menu is the model chain, with the model in use when a fallback took over: choosing one
is ``/model`` (the switch is recorded in the session). After a prompt whose model changed (a
fallback, or its return) the editor gets ``config_option_update``.
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)

from agent.acp.modes import MODES, switch_mode
from agent.session import Agent
from agent.setup.startup import SetupError
from providers.models import ModelRef
from sessions import SessionError

MODE, MODEL = "mode", "model"


def config_options(agent: Agent) -> list[SessionConfigOptionSelect]:
    """The menus, each with its current value."""
    options: list[SessionConfigOptionSelect] = []
    if agent.permissions is not None:
        options.append(
            SessionConfigOptionSelect(
                type="select",
                id=MODE,
                name="Mode",
                category="mode",
                current_value=agent.permissions.modes.mode,
                options=[
                    SessionConfigSelectOption(
                        value=mode.id, name=mode.name, description=mode.description
                    )
                    for mode in MODES
                ],
            )
        )
    chain = agent.models()
    models = list(dict.fromkeys([*chain, agent.model]))
    options.append(
        SessionConfigOptionSelect(
            type="select",
            id=MODEL,
            name="Model",
            category="model",
            current_value=agent.model,
            options=[
                SessionConfigSelectOption(value=ref, name=ref, description=_role(ref, chain))
                for ref in models
            ],
        )
    )
    return options


def set_option(agent: Agent, config_id: str, value: str | bool) -> list[SessionConfigOptionSelect]:
    """``session/set_config_option``: the menus after the change.

    Raises:
        RequestError: an unknown menu or value, or a model that cannot be used here (the
            message says why, as ``/model`` would).
    """
    if config_id == MODE and isinstance(value, str):
        switch_mode(agent.permissions, value)
    elif config_id == MODEL and isinstance(value, str):
        offered = {*agent.models(), agent.model}  # the model menu's entries
        if value not in offered:
            known = ", ".join(sorted(offered))
            raise RequestError.invalid_params({"value": f"{value!r} is not one of {known}"})
        try:
            agent.use_model(ModelRef.parse(value))
        except (SetupError, SessionError, ValueError, KeyError) as error:
            raise RequestError.invalid_params({"value": str(error)}) from None
    else:
        raise RequestError.invalid_params(
            {"configId": f"{config_id!r} with {value!r}: the options are {MODE} and {MODEL}"}
        )
    return config_options(agent)


def options_update(agent: Agent) -> ConfigOptionUpdate:
    """The menus again, for the editor after the model or mode changed without its asking."""
    return ConfigOptionUpdate(
        session_update="config_option_update", config_options=config_options(agent)
    )


def _role(ref: str, chain: list[str]) -> str:
    if ref not in chain:
        return "in use"
    position = chain.index(ref)
    return "primary" if position == 0 else f"fallback {position}"
