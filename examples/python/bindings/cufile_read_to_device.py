"""cuFile (GPUDirect Storage): a file read straight into GPU memory.

Writes 4 MiB of random bytes to a temporary file, opens cuFile's driver
(cuda.bindings.cufile's driver_open), registers the file descriptor
(handle_register, given the address of a CUfileDescr_t built with ctypes),
reads the file into memory from cuMemAlloc with cufile.read, once whole and
once at an offset, and compares with cuMemcpyDtoH's copy of it. Without the
nvidia-fs kernel driver cuFile works in compatibility mode (POSIX reads through
a bounce buffer), which is what a container usually has; where cuFile cannot
open, or cannot register a file (a container without udev, whose file systems'
attributes it cannot read), the sample says why and is skipped.

cuFile's functions raise cuFileError on failure and return their outputs; the
driver's return (status, *outputs). Has no kernels to compile."""

import ctypes
import os
import sys
import tempfile

from cuda.bindings import cufile, driver

from helpers import checkCudaErrors, findCudaDevice, skip

SIZE = 4 << 20
OFFSET = 4096


class _DescrHandle(ctypes.Union):
    _fields_ = [("fd", ctypes.c_int), ("handle", ctypes.c_void_p)]


class CUfileDescr(ctypes.Structure):
    """cufile.h's CUfileDescr_t: the handle type, the descriptor, the file system's operations."""
    _fields_ = [("type", ctypes.c_int), ("handle", _DescrHandle), ("fs_ops", ctypes.c_void_p)]


def main() -> None:
    device = findCudaDevice()
    context = checkCudaErrors(driver.cuDevicePrimaryCtxRetain(device))
    checkCudaErrors(driver.cuCtxSetCurrent(context))
    version = cufile.get_version()
    print(f"cuFile {version // 1000}.{version % 1000 // 10}")
    try:
        cufile.driver_open()
    except cufile.cuFileError as exc:
        checkCudaErrors(driver.cuDevicePrimaryCtxRelease(device))
        skip(f"cuFile cannot open its driver here: {exc}")
    data = os.urandom(SIZE)
    failures = 0
    with tempfile.NamedTemporaryFile(prefix="cufile-sample-") as f:
        f.write(data)
        f.flush()
        fd = os.open(f.name, os.O_RDONLY)
        dptr = checkCudaErrors(driver.cuMemAlloc(SIZE))
        fh = None
        unregistered = None
        try:
            descr = CUfileDescr()
            descr.type = int(cufile.FileHandleType.OPAQUE_FD)
            descr.handle.fd = fd
            try:
                fh = cufile.handle_register(ctypes.addressof(descr))
            except cufile.cuFileError as exc:
                # A container without udev: cuFile cannot read the file system's
                # attributes (cufile.log says so) and registers no file at all.
                unregistered = exc
            for file_offset, length in ((0, SIZE), (OFFSET, SIZE - OFFSET)) if fh is not None else ():
                checkCudaErrors(driver.cuMemsetD8(dptr, 0, SIZE))
                done = cufile.read(fh, int(dptr), length, file_offset, 0)
                back = bytearray(length)
                checkCudaErrors(driver.cuMemcpyDtoH(back, dptr, length))
                same = bytes(back) == data[file_offset:file_offset + length]
                print(f"read {done} of {length} bytes at file offset {file_offset}: "
                      f"{'the same bytes' if same else 'DIFFERENT bytes'}")
                # cuda-bindings 13.0's read returns None; 13.5's (and cubind's) the bytes read.
                failures += (done is not None and done != length) or not same
        finally:
            if fh is not None:
                cufile.handle_deregister(fh)
            os.close(fd)
            checkCudaErrors(driver.cuMemFree(dptr))
            cufile.driver_close()
            checkCudaErrors(driver.cuDevicePrimaryCtxRelease(device))
    if unregistered is not None:
        skip(f"cuFile cannot register a file here: {unregistered}")
    if failures:
        print("Test FAILED")
        sys.exit(1)
    print("Test PASSED")


if __name__ == "__main__":
    main()
