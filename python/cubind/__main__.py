"""python -m cubind [--json]: versions, the driver, the devices, where each CUDA library was found, and the functions each lacks.

The text report prints every error whole (a loader error lists every place
tried, one per line); --json prints the same report as one JSON object, for
bug reports. A library older than the headers cubind was generated from
lacks their newer functions (calling one raises, naming the CUDA version that
introduced it): the report lists them under the library.
"""

import argparse
import json
import sys

import cubind
import cubind.bindings


def _error_text(e):
    return str(e).strip() or type(e).__name__


def _driver_report():
    """The driver's version and the devices, or why they are not available."""
    from cubind.bindings import driver

    report = {"version": None, "devices": [], "error": None, "path": None, "missing": []}
    try:
        err, version = driver.cuDriverGetVersion()
        if err != 0:
            report["error"] = f"cuDriverGetVersion failed: {err!r}"
            return report
        report["version"] = f"{version // 1000}.{version % 1000 // 10}"
        err, = driver.cuInit(0)
        if err != 0:
            report["error"] = f"cuInit failed: {err!r}"
            return report
        err, count = driver.cuDeviceGetCount()
        if err != 0:
            report["error"] = f"cuDeviceGetCount failed: {err!r}"
            return report
        for ordinal in range(count):
            _, dev = driver.cuDeviceGet(ordinal)
            _, name = driver.cuDeviceGetName(256, dev)
            _, major = driver.cuDeviceGetAttribute(
                driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
            _, minor = driver.cuDeviceGetAttribute(
                driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
            _, total = driver.cuDeviceTotalMem(dev)
            report["devices"].append({"ordinal": ordinal, "name": name.split(b"\0")[0].decode(),
                                      "arch": f"sm_{major}{minor}", "memory_bytes": int(total)})
    except RuntimeError as e:
        report["error"] = _error_text(e)
    finally:
        status = cubind.library_status("driver")
        if status["loaded"]:
            report["path"] = status["path"]
            report["missing"] = _missing(status)
    return report


def _missing(status):
    """The functions a loaded library lacks: [{"function", "introduced"}]."""
    return [{"function": f, "introduced": v} for f, v in status["missing"]]


def _library_report(name, probe):
    """One library's version, the file it was loaded from and the functions it
    lacks, or the loader's whole error."""
    try:
        version = probe()
    except RuntimeError as e:
        return {"version": None, "path": None, "error": _error_text(e), "missing": []}
    status = cubind.library_status(name)
    return {"version": version, "path": status["path"], "error": None, "missing": _missing(status)}


def _cufile_version(v):
    """cuFileGetVersion's 1000 * major + 10 * minor (+ patch): (major, minor, patch)."""
    return v // 1000, v % 1000 // 10, v % 10


def report():
    """Everything python -m cubind prints, as a dict (what --json writes)."""
    from cubind.bindings import cudla, cufile, nvfatbin, nvjitlink, nvml, nvrtc, nvvm, runtime

    def runtime_version():
        err, version = runtime.cudaRuntimeGetVersion()
        if err != 0:
            raise RuntimeError(f"cudaRuntimeGetVersion failed: {err!r}")
        return f"{version // 1000}.{version % 1000 // 10}"

    def nvrtc_version():
        err, major, minor = nvrtc.nvrtcVersion()
        if err != 0:
            raise RuntimeError(f"nvrtcVersion failed: {err!r}")
        return f"{major}.{minor}"

    def nvml_version():
        # NVML's own errors (no library included) read as the loader's do.
        try:
            nvml.init_v2()
            try:
                return nvml.system_get_nvml_version()
            finally:
                nvml.shutdown()
        except nvml.NvmlError as e:
            raise RuntimeError(e.log or str(e)) from e

    return {
        "cubind": cubind.__version__,
        "cubind.bindings": cubind.bindings.__version__,
        "cuda_headers": cubind.bindings._cuda_version,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "driver": _driver_report(),
        "libraries": {
            "runtime": _library_report("runtime", runtime_version),
            "nvrtc": _library_report("nvrtc", nvrtc_version),
            "nvjitlink": _library_report("nvjitlink", lambda: "%d.%d" % nvjitlink.version()),
            "nvvm": _library_report("nvvm", lambda: "%d.%d" % nvvm.version()),
            "nvfatbin": _library_report("nvfatbin", lambda: "%d.%d" % nvfatbin.version()),
            "nvml": _library_report("nvml", nvml_version),
            # cuFile's version needs no nvidia-fs driver; cuDLA's none of a DLA.
            "cufile": _library_report("cufile", lambda: "%d.%d.%d" % _cufile_version(cufile.get_version())),
            "cudla": _library_report("cudla", lambda: str(cudla.get_version())),
        },
    }


def _line(label, value):
    """One labelled line; a value of several lines continues indented under the label."""
    first, *rest = str(value).splitlines() or [""]
    print(f"{label:<24}{first}")
    for line in rest:
        print(" " * 24 + line)


def print_text(r):
    _line("cubind", r["cubind"])
    _line("cubind.bindings", f"{r['cubind.bindings']} (CUDA {r['cuda_headers']} headers)")
    _line("python", r["python"])
    drv = r["driver"]
    if drv["version"] is not None:
        _line("driver API", drv["version"])
    if drv["error"] is None:
        _line("devices", len(drv["devices"]))
        for d in drv["devices"]:
            _line(f"  device {d['ordinal']}",
                  f"{d['name']} ({d['arch']}, {d['memory_bytes'] / 2**30:.1f} GiB)")
    elif drv["version"] is not None:
        _line("devices", drv["error"])
    else:
        _line("driver", f"not available: {drv['error']}")
    _lacks("driver", drv["missing"])
    for name, lib in r["libraries"].items():
        if lib["error"] is None:
            _line(name, f"{lib['version']} from {lib['path']}")
            _lacks(name, lib["missing"])
        else:
            _line(name, f"not found: {lib['error']}")
    if drv["path"]:
        _line("driver library", drv["path"])


def _lacks(name, missing):
    """The functions a library lacks, by the CUDA version that introduced them."""
    if not missing:
        return
    by_version = {}
    for m in missing:
        by_version.setdefault(m["introduced"] or "?", []).append(m["function"])
    lines = [f"{len(missing)} function(s) of the CUDA {cubind.bindings._cuda_version} headers; "
             "calling one raises"]
    for version in sorted(by_version, key=lambda v: [int(x) for x in v.split(".")] if v != "?" else [99]):
        # NVML's header is not in the toolkits the releases are read from.
        label = f"CUDA {version}" if version != "?" else "newer than this library (release not recorded)"
        lines.append(f"{label}: " + ", ".join(by_version[version]))
    _line(f"  {name} lacks", "\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cubind", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON (for bug reports)")
    args = parser.parse_args(argv)
    r = report()
    if args.json:
        json.dump(r, sys.stdout, indent=2)
        print()
    else:
        print_text(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
