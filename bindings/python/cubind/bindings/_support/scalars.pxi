# Scalars written or read by struct-module format character, without the struct module.

from libc.stdint cimport uintptr_t



cdef int store_scalar(void* dst, char fmt, object v) except -1:
    if fmt == b"i":
        (<int*>dst)[0] = v
    elif fmt == b"I":
        (<unsigned int*>dst)[0] = v
    elif fmt == b"q":
        (<long long*>dst)[0] = v
    elif fmt == b"Q":
        (<unsigned long long*>dst)[0] = v
    elif fmt == b"N":
        (<size_t*>dst)[0] = v
    elif fmt == b"n":
        (<Py_ssize_t*>dst)[0] = v
    elif fmt == b"l":
        (<long*>dst)[0] = v
    elif fmt == b"L":
        (<unsigned long*>dst)[0] = v
    elif fmt == b"h":
        (<short*>dst)[0] = v
    elif fmt == b"H":
        (<unsigned short*>dst)[0] = v
    elif fmt == b"b":
        (<signed char*>dst)[0] = v
    elif fmt == b"B":
        (<unsigned char*>dst)[0] = v
    elif fmt == b"?":
        (<unsigned char*>dst)[0] = 1 if v else 0
    elif fmt == b"f":
        (<float*>dst)[0] = v
    elif fmt == b"d":
        (<double*>dst)[0] = v
    elif fmt == b"P":
        (<void**>dst)[0] = plain_address(v, "value")
    elif fmt == b"c":
        (<char*>dst)[0] = (<bytes>v)[0] if isinstance(v, bytes) and len(v) == 1 else v
    else:
        raise ValueError(f"unsupported scalar format {chr(fmt)!r}")
    return 0


cdef object load_scalar(const void* src, char fmt):
    if fmt == b"i":
        return (<const int*>src)[0]
    if fmt == b"I":
        return (<const unsigned int*>src)[0]
    if fmt == b"q":
        return (<const long long*>src)[0]
    if fmt == b"Q":
        return (<const unsigned long long*>src)[0]
    if fmt == b"N":
        return (<const size_t*>src)[0]
    if fmt == b"n":
        return (<const Py_ssize_t*>src)[0]
    if fmt == b"l":
        return (<const long*>src)[0]
    if fmt == b"L":
        return (<const unsigned long*>src)[0]
    if fmt == b"h":
        return (<const short*>src)[0]
    if fmt == b"H":
        return (<const unsigned short*>src)[0]
    if fmt == b"b":
        return (<const signed char*>src)[0]
    if fmt == b"B" or fmt == b"?":
        return (<const unsigned char*>src)[0]
    if fmt == b"f":
        return (<const float*>src)[0]
    if fmt == b"d":
        return (<const double*>src)[0]
    if fmt == b"P":
        return <uintptr_t>(<void* const*>src)[0]
    raise ValueError(f"unsupported scalar format {chr(fmt)!r}")
