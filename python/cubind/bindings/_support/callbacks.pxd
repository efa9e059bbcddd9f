# Python callbacks handed to CUDA: a reference kept until the callback ran.
# A one-shot context is released after its callback ran (callback_finished);
# one captured into a graph is kept, since every launch of the graph runs it.
cdef void* callback_context(object fn, object user_data, bint one_shot=*) except NULL
cdef void callback_invoke(void* context, tuple leading) noexcept
cdef void callback_discard(void* context) noexcept
cdef void callback_finished(void* context) noexcept
