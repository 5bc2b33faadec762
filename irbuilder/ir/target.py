"""``T.target(...)``: a compilation target as a value (TVM's ``tvm.target.Target``), mostly the
``"target"`` attribute of a function. We keep the configuration as given (a kind string or a
dict); it is printed back as written and does not change what ``build`` does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Target"]


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple((str(k), _freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Target:
    """A target: ``config`` is the kind (``"llvm"``) or the dict's items, in order."""

    config: str | tuple[tuple[str, Any], ...]
    host: Target | None = None

    @staticmethod
    def make(config: Any, host: Any = None) -> Target:
        """``T.target(config, host=None)``: ``config`` a kind string or a dict with ``"kind"``."""
        if not isinstance(config, (str, Mapping)):
            raise TypeError(
                f"T.target expects a config dict or string, got {type(config).__name__}"
            )
        if isinstance(config, Mapping):
            if "kind" not in config:
                raise ValueError("T.target: the config dict needs a 'kind' entry")
            if "host" in config and host is not None:
                raise ValueError("T.target: the host is given both in the config and as host=")
        if host is not None and not isinstance(host, (str, Mapping, Target)):
            raise TypeError(f"T.target: host must be a dict, string or T.target, got {host!r}")
        host_target = host if isinstance(host, Target) or host is None else Target.make(host)
        frozen = config if isinstance(config, str) else _freeze(config)
        return Target(frozen, host_target)

    @property
    def kind(self) -> str:
        """The target kind (``"llvm"``, ``"cuda"``, ...)."""
        if isinstance(self.config, str):
            return self.config.split()[0] if self.config.split() else ""
        return str(dict(self.config)["kind"])

    def config_value(self) -> str | dict[str, Any]:
        """The configuration as ``T.target`` takes it."""
        if isinstance(self.config, str):
            return self.config
        return {k: _thaw(v) for k, v in self.config}


def _thaw(value: Any) -> Any:
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in value)
    ):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value
