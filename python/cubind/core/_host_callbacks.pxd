# cython: language_level=3
# The host functions that run Python on the driver's threads, for the modules
# that queue them (Stream.launch_host_func, graph host nodes, the user objects
# that keep Python objects alive for a graph). Each is a CUhostFn. They live in
# this one module, which owns the process's gate of Python callbacks.

cimport cubind.core._cpp as cpp

# A callable queued once (cuLaunchHostFunc): calls it, then lets go of the
# reference it was given.
cdef void run_host_callback(void* callable) noexcept nogil
# A graph host node's callable, called at every launch of the graph.
cdef void run_python_callable(void* callable) noexcept nogil
# The release function of a graph's user object that owns a reference.
cdef void release_python_object(void* obj) noexcept nogil
# The release functions of a host node's user data: malloc'ed, or the caller's.
cdef void release_malloced(void* data) noexcept nogil
cdef void release_nothing(void* data) noexcept nogil
# fn as the driver calls it: a Python callable, or a ctypes function pointer
# of CUhostFn's prototype called with user_data (an int address, or a
# bytes-like object, copied), checked, with owner.method and the parameter
# (param, and user_data) named in errors.
# Sets function, data and release: release(data) lets go of what data holds
# (fn, and a ctypes function's record with its copy), which lives until then
# whatever the caller drops: a graph's user object owns it
# (cuUserObjectCreate with release).
# Returns the Python callable, or None for a ctypes function pointer.
cdef object host_function(object fn, object user_data, str owner, str method, str param,
                          cpp.CUhostFn* function, void** data, cpp.CUhostFn* release)
# The host function of host_function's to queue one time (cuLaunchHostFunc
# outside a capture): it releases its data itself after the call.
cdef cpp.CUhostFn run_once(cpp.CUhostFn function) noexcept
