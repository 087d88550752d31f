"""The ``OTEL_*`` settings telemetry reads, checked without the OpenTelemetry SDK.

`agent.telemetry.export` builds the exporters from them; ``agent doctor`` describes them
(`describe`): where metrics and events go, which headers are sent (names only, never their
values) and whether the packages the exporters need can be imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "KINDS",
    "PROTOCOLS",
    "Route",
    "TelemetryError",
    "TelemetryStatus",
    "describe",
    "header_names",
    "header_values",
    "kinds",
    "millis",
    "protocol",
]

KINDS = ("otlp", "console", "none")
PROTOCOLS = ("grpc", "http/protobuf")
SIGNALS = {
    "METRICS": ("OTEL_METRICS_EXPORTER", "v1/metrics"),
    "LOGS": ("OTEL_LOGS_EXPORTER", "v1/logs"),
}
_SDK = "opentelemetry.sdk"
_EXPORTERS = {
    "grpc": "opentelemetry.exporter.otlp.proto.grpc",
    "http/protobuf": "opentelemetry.exporter.otlp.proto.http",
}


class TelemetryError(Exception):
    """A telemetry setting is wrong; the message says which and what it may be."""


def kinds(environ: Mapping[str, str], name: str) -> list[str]:
    """The exporters a variable names (``otlp`` when unset); ``none`` alone means none.

    Raises:
        TelemetryError: it names an exporter there is none of.
    """
    raw = environ.get(name, "").strip() or "otlp"
    named = [kind.strip().lower() for kind in raw.split(",") if kind.strip()]
    unknown = [kind for kind in named if kind not in KINDS]
    if unknown:
        raise TelemetryError(
            f"{name}={raw!r}: {unknown[0]!r} is not an exporter here; use otlp, console or none."
        )
    return [kind for kind in dict.fromkeys(named) if kind != "none"]


def millis(environ: Mapping[str, str], name: str, default: int) -> int:
    """A whole number of milliseconds above 0 (``default`` when unset).

    Raises:
        TelemetryError: it is not one.
    """
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise TelemetryError(f"{name}={raw!r} must be a whole number of milliseconds above 0.")
    return value


def protocol(environ: Mapping[str, str], signal: str) -> str:
    """The OTLP protocol of ``signal`` (``METRICS``, ``LOGS``): its own variable, else the
    shared one, else ``http/protobuf``.

    Raises:
        TelemetryError: neither grpc nor http/protobuf.
    """
    name = f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL"
    raw = environ.get(name, "").strip() or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip()
    if not raw:
        return "http/protobuf"
    if raw not in PROTOCOLS:
        which = name if environ.get(name, "").strip() else "OTEL_EXPORTER_OTLP_PROTOCOL"
        raise TelemetryError(f"{which}={raw!r}: use grpc or http/protobuf.")
    return raw


def _header_pairs(environ: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(variable, header name, value) of every ``OTEL_EXPORTER_OTLP_*HEADERS`` entry."""
    pairs = []
    for variable, raw in environ.items():
        upper = variable.upper()
        if not (upper.startswith("OTEL_EXPORTER_OTLP_") and upper.endswith("HEADERS")):
            continue
        for entry in raw.split(","):
            name, sep, value = entry.partition("=")
            if sep and name.strip():
                pairs.append((variable, name.strip(), value.strip()))
    return pairs


def header_names(environ: Mapping[str, str]) -> list[str]:
    """The names of the headers the exporters send, without their values."""
    return list(dict.fromkeys(name for _, name, _ in _header_pairs(environ)))


def header_values(environ: Mapping[str, str]) -> dict[str, str]:
    """Each header value the exporters send, by a label (for the redactor: they usually
    carry the collector's token)."""
    return {
        f"{variable}.{name}": value for variable, name, value in _header_pairs(environ) if value
    }


@dataclass(frozen=True)
class Route:
    """Where one signal goes."""

    signal: str
    """``metrics`` or ``events``."""
    exporters: list[str]
    protocol: str = ""
    endpoint: str = ""
    """The OTLP endpoint, without a user, password or query it may hold."""


@dataclass(frozen=True)
class TelemetryStatus:
    """What ``agent doctor`` says of telemetry."""

    on: bool
    routes: list[Route] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    problem: str = ""
    """A setting the SDK cannot use (telemetry then stays off)."""
    missing: list[str] = field(default_factory=list)
    """Packages the exporters need that cannot be imported."""


def describe(on: bool, environ: Mapping[str, str]) -> TelemetryStatus:
    """Telemetry as it would start here. When it is on, the packages it needs are imported
    to check them (a doctor's cost, never a session's)."""
    if not on:
        return TelemetryStatus(on=False)
    routes: list[Route] = []
    needed = {_SDK}
    try:
        for signal, (variable, path) in SIGNALS.items():
            named = kinds(environ, variable)
            label = "metrics" if signal == "METRICS" else "events"
            if "otlp" not in named:
                routes.append(Route(label, named))
                continue
            used = protocol(environ, signal)
            needed.add(_EXPORTERS[used])
            routes.append(Route(label, named, used, _endpoint(environ, signal, used, path)))
        millis(environ, "OTEL_METRIC_EXPORT_INTERVAL", 1)
        millis(environ, "OTEL_LOGS_EXPORT_INTERVAL", 1)
    except TelemetryError as error:
        return TelemetryStatus(on=True, problem=str(error))
    missing = [name for name in sorted(needed) if not _importable(name)]
    return TelemetryStatus(True, routes, header_names(environ), missing=missing)


def _endpoint(environ: Mapping[str, str], signal: str, used: str, path: str) -> str:
    own = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT", "").strip()
    shared = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if own:
        url = own
    elif shared:
        url = shared if used == "grpc" else f"{shared.rstrip('/')}/{path}"
    else:
        url = "localhost:4317" if used == "grpc" else f"http://localhost:4318/{path}"
    parts = urlsplit(url)
    if not parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]  # never a user or password written into the URL
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:  # missing, or installed but broken: either way it cannot export
        return False
    return True
