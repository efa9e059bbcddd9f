"""What every example does first: the current device, or a clean exit where
there is none (no driver, or no GPU). An example that can compile or link
without a GPU asks device_or_none() instead, does that part, then skip()s."""
import sys
from typing import Any, NoReturn, Optional, Tuple


def _reason(error: BaseException) -> str:
    # The whole message on one line: never cut, so no word is lost.
    return f"{error.__class__.__name__}: {' '.join(str(error).split())}"


def device_or_none(Device: Any) -> Tuple[Optional[Any], str]:
    """(the current device, "") or (None, why there is none)."""
    try:
        device = Device()
        device.set_current()
    except Exception as error:  # no driver (RuntimeError) or no device (CUDAError)
        return None, _reason(error)
    return device, ""


def skip(reason: str) -> NoReturn:
    print(f"no GPU: {reason}; skipped")
    sys.exit(0)


def device_or_exit(Device: Any) -> Any:
    device, reason = device_or_none(Device)
    if device is None:
        skip(reason)
    return device
