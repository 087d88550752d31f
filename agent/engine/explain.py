"""How a model call that failed for good is told to the person: one actionable sentence."""

from __future__ import annotations

from providers import ErrorKind, LlmError


def explain(error: LlmError) -> str:
    """One actionable sentence for the person."""
    hints = {
        ErrorKind.AUTH: "Check the API key (ANTHROPIC_API_KEY, OPENAI_API_KEY or the "
        "provider's api_key_env in the config).",
        ErrorKind.PERMISSION: "The key lacks access to this model; pick another (--model, or "
        "/model in the REPL).",
        ErrorKind.QUOTA: "The account is out of credit or quota; add credit or use another "
        "provider.",
        ErrorKind.NOT_FOUND: "The provider does not know this model; check 'model' in the config.",
        ErrorKind.CONTEXT_OVERFLOW: "The conversation no longer fits the model's context; "
        "run /compact or start a new session.",
        ErrorKind.BAD_REQUEST: "The provider rejected the request.",
        ErrorKind.REFUSAL: "The provider declined the request; rephrase it or try another "
        "model (--model, or /model in the REPL).",
    }
    if error.kind is ErrorKind.UNREACHABLE:  # its message names the URL and what to check
        return f"{error} The session is saved."
    hint = hints.get(error.kind) or WAIT_HINTS.get(error.kind, "try again later")
    if error.kind.transient:
        hint = f"{hint[0].upper()}{hint[1:]}. The session is saved."
    return f"{error} — {hint}"


# What to do when retrying did not get through: the session is saved, so the person can.
WAIT_HINTS = {
    ErrorKind.CONNECTION: "is the server running? Check its base_url, or pick another model "
    "(--model, or /model in the REPL)",
    ErrorKind.TIMEOUT: "the model did not answer in time; try again, or raise "
    "request_timeout in the config",
    ErrorKind.RATE_LIMIT: "wait a little and try again, or add fallback_models in the config",
    ErrorKind.OVERLOADED: "the provider is busy; try again in a few minutes, or add "
    "fallback_models in the config",
    ErrorKind.SERVER: "the provider is having trouble; try again in a few minutes, or add "
    "fallback_models in the config",
}
