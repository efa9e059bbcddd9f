# Python callbacks handed to CUDA: a reference kept until the callback ran.
# A one-shot context is released after its callback ran (callback_finished);
# one captured into a graph is kept, since every launch of the graph runs it.
cdef void* callback_context(object fn, object user_data, bint one_shot=*) except NULL
cdef void callback_invoke(void* context, tuple leading) noexcept
cdef void callback_discard(void* context) noexcept
cdef void callback_finished(void* context) noexcept

# The gate every callback passes, read without the GIL: callback_enter()
# before taking the GIL (False: skip the callback), callback_leave() after
# letting it go. At exit, before the interpreter finalizes, the gate shuts
# and the exit waits for the callbacks inside it: CPython would end a
# callback's thread (the driver's) that takes the GIL while it finalizes.
cdef bint callback_enter() noexcept nogil
cdef void callback_leave() noexcept nogil

# True once the interpreter has begun to finalize: a thread that is not
# Python's must then not take the GIL (CPython ends such a thread when it
# tries). Read without the GIL.
cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030D0000
    #define cubind_python_finalizing() Py_IsFinalizing()
    #else
    #define cubind_python_finalizing() _Py_IsFinalizing()
    #endif
    """
    bint python_finalizing "cubind_python_finalizing"() noexcept nogil
