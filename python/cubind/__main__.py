"""python -m cubind: versions, the driver, the devices, and where each CUDA library was found."""

import sys

import cubind
import cubind.bindings


def _line(label, value):
    print(f"{label:<24}{value}")


def main():
    _line("cubind", cubind.__version__)
    _line("cubind.bindings", f"{cubind.bindings.__version__} (CUDA {cubind.bindings._cuda_version} headers)")
    _line("python", sys.version.split()[0])

    from cubind.bindings import driver, nvjitlink, nvrtc, runtime

    try:
        err, version = driver.cuDriverGetVersion()
        _line("driver API", f"{version // 1000}.{version % 1000 // 10}" if err == 0 else f"error {err!r}")
        err, = driver.cuInit(0)
        if err != 0:
            _line("devices", f"cuInit failed: {err!r}")
        else:
            err, count = driver.cuDeviceGetCount()
            _line("devices", count if err == 0 else f"error {err!r}")
            for ordinal in range(count if err == 0 else 0):
                _, dev = driver.cuDeviceGet(ordinal)
                _, name = driver.cuDeviceGetName(256, dev)
                _, major = driver.cuDeviceGetAttribute(
                    driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
                _, minor = driver.cuDeviceGetAttribute(
                    driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
                _, total = driver.cuDeviceTotalMem(dev)
                _line(f"  device {ordinal}", f"{name.decode()} (sm_{major}{minor}, {total / 2**30:.1f} GiB)")
    except RuntimeError as e:
        _line("driver", f"not available: {str(e).splitlines()[0]}")

    for name, probe in (("runtime", lambda: runtime.cudaRuntimeGetVersion()[1]),
                        ("nvrtc", lambda: "%d.%d" % nvrtc.nvrtcVersion()[1:]),
                        ("nvjitlink", lambda: "%d.%d" % nvjitlink.version())):
        try:
            version = probe()
            if name == "runtime":
                version = f"{version // 1000}.{version % 1000 // 10}"
            _line(name, f"{version} from {cubind.library_status(name)['path']}")
        except RuntimeError as e:
            _line(name, f"not found: {str(e).splitlines()[0]}")
    status = cubind.library_status("driver")
    if status["loaded"]:
        _line("driver library", status["path"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
