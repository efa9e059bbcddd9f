# The one cimport the generated modules (driver, runtime, nvrtc, nvjitlink, ...)
# use: `from cubind.bindings cimport _support`, then _support.<name> for the
# machinery they share, all of it in the one module _machinery.
from cubind.bindings._support._machinery cimport BufferRef, address, caller_buffer, release_address, sized_output
from cubind.bindings._support._machinery cimport (
    callback_context, callback_discard, callback_enter, callback_finished, callback_invoke, callback_leave,
    python_finalizing)
from cubind.bindings._support._machinery cimport (
    alloc_array, as_bytes, as_int, c_string, check_count, check_list, enum_arg, plain_address, signed_arg,
    unsigned_arg)
from cubind.bindings._support._machinery cimport EnumTable, enum_member, status, status_alone
from cubind.bindings._support._machinery cimport (
    ArrayList, FieldArray, address_number, array_assign, array_list, char_array_assign, enum_field, field_address, field_items, float_field,
    handle_field, handle_list_field, int_field, keep, kept_array, struct_list_field, struct_text, value_field)
from cubind.bindings._support._machinery cimport (
    Handle, Struct, adopt_memory, alloc_struct, buffer_address, detach_views, free_struct, handle_value, new_handle,
    not_live, only_spare, set_handle, spare_pair, struct_pointer, struct_pointer_required)
from cubind.bindings._support._machinery cimport KernelParams, kernel_params, kernel_params_pointer
from cubind.bindings._support._machinery cimport load_scalar, store_scalar
from cubind.bindings._support._machinery cimport (
    TypedSlot, TypedSpec, TypedTable, TypedValue, typed_init, typed_read, typed_release, typed_spec, typed_value)
