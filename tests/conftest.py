"""Suite-wide settings: property tests are derandomized so CI runs are reproducible.

Set ``TVMSCRIPT_HYPOTHESIS_RANDOM=1`` to explore with fresh random examples instead.
"""

import os

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(
    "explore" if os.environ.get("TVMSCRIPT_HYPOTHESIS_RANDOM") else "reproducible"
)


# -- round-trip recording ----------------------------------------------------------------
# Every PrimFunc/IRModule the suite parses, builds with the IRBuilder or lowers is recorded
# (a few per test), so that tests/zz_roundtrip/ can check that each prints to TVMScript
# which parses back to a structurally equal function. The hooks are installed here, before
# any test module imports `lower`.
from typing import Any  # noqa: E402

import irbuilder.builder  # noqa: E402
import lowering  # noqa: E402
import lowering.pipeline  # noqa: E402
import tvmscript.parser.entry  # noqa: E402
from irbuilder.ir import IRModule, PrimFunc  # noqa: E402

_PER_TEST = 4  # per test and kind: hypothesis tests build hundreds of similar kernels


class RoundTripRecords:
    """Recorded functions: ``items`` maps id to (label, kind, node)."""

    def __init__(self) -> None:
        self.items: dict[int, tuple[str, str, Any]] = {}
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, kind: str, node: Any) -> None:
        if not isinstance(node, (PrimFunc, IRModule)):
            return
        test = os.environ.get("PYTEST_CURRENT_TEST", "<import>").split(" (")[0]
        known = self.items.get(id(node))
        if known is not None:
            if kind == "parsed":  # the parser's own IRBuilder got it first
                self.items[id(node)] = (known[0], kind, node)
            return
        count = self._counts.get((test, kind), 0)
        if count >= _PER_TEST:
            return
        self._counts[test, kind] = count + 1
        self.items[id(node)] = (f"{test} [{kind} #{count}]", kind, node)


RECORDS = RoundTripRecords()

_original_get = irbuilder.builder.IRBuilder.get
_original_finish = tvmscript.parser.entry._finish
_original_lower = lowering.pipeline.lower


def _recording_get(self: Any) -> Any:
    result = _original_get(self)
    RECORDS.add("irbuilder", result)
    return result


def _recording_finish(*args: Any, **kwargs: Any) -> Any:
    result = _original_finish(*args, **kwargs)
    RECORDS.add("parsed", result)
    return result


def _recording_lower(ir: Any, *args: Any, **kwargs: Any) -> Any:
    result = _original_lower(ir, *args, **kwargs)
    RECORDS.add("lowered", result)
    return result


irbuilder.builder.IRBuilder.get = _recording_get  # type: ignore[method-assign]
tvmscript.parser.entry._finish = _recording_finish
lowering.pipeline.lower = _recording_lower
lowering.lower = _recording_lower


def pytest_configure(config: Any) -> None:
    config.tvmscript_roundtrip_records = RECORDS
