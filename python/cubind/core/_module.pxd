# cython: language_level=3
from libcpp.memory cimport unique_ptr
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp

cdef extern from "_launch_args.hpp" namespace "cubind_core":
    cdef cppclass ArgPlan:
        pass

cdef class ObjectCode:
    cdef object __weakref__
    cdef unique_ptr[cpp.ObjectCode] _cpp
    cdef object _code
    cdef str _code_type
    cdef str _name
    cdef dict _symbol_mapping
    @staticmethod
    cdef ObjectCode _wrap(cpp.ObjectCode* code, object module, str code_type, str name, dict symbol_mapping)
    cdef cpp.ObjectCode* _get(self) except NULL

cdef class KernelAttributes:
    cdef Kernel _kernel
    cdef int _device_id
    cdef int _get(self, int attribute) except? -1

cdef class KernelOccupancy:
    cdef Kernel _kernel

cdef class Kernel:
    # What launch reads, first (_launch_fast.hpp): the parameter sizes, read
    # from the driver at the first launch, with the kernel's handle; the
    # 8-byte slots the arguments take when each starts on a slot of its own.
    cdef bint _have_sizes
    cdef signed char _plan_count    # launch's argument plan (_launch_args.hpp): its count,
    cdef cpp.CUkernel _handle
    cdef size_t _slots
    cdef vector[size_t] _sizes
    cdef ArgPlan _plan              # and the plan, right after _sizes
    cdef object __weakref__
    cdef cpp.Kernel _cpp
    cdef object _module
    cdef int _load_sizes(self, cpp.CUstream stream=*) except -1
