"""What every example does first: the current device, or a clean exit where
there is none (no driver, or no GPU)."""
import sys
from typing import Any


def device_or_exit(Device: Any) -> Any:
    try:
        device = Device()
        device.set_current()
    except Exception as error:  # no driver (RuntimeError) or no device (CUDAError)
        print(f"no GPU: {error.__class__.__name__}: {' '.join(str(error).split())[:160]}; skipped")
        sys.exit(0)
    return device
