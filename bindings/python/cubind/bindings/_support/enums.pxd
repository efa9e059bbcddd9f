# The enums of one generated module: its classes are built on first use, and
# converting a C value (a status code on every call's return path) is a dict
# lookup inlined into the caller.

cdef class EnumTable:
    cdef str module
    cdef dict namespace    # the module's globals: classes are set there once built
    cdef dict specs        # name -> "doc\nNAME VALUE NAME VALUE ..."
    cdef dict prefixes     # name -> a member prefix also dropped (nvjitlink)
    cdef dict aliases      # name -> the enum it names
    cdef str status_name   # the class of the module's status codes
    cdef dict members      # name -> its class's value -> member dict, once converted
    cdef object success    # the status member for 0, once converted
    cdef tuple success_alone  # (success,): what a call that returns its status alone returns
    cdef object enum_class(self, str name)
    cdef object new_member(self, str name, long long value)
    cdef object status_member(self, long long code)
    cdef tuple status_alone_tuple(self, long long code)


# The member of enum `name` for a C value (unknown values get a member of their own).
cdef inline object enum_member(EnumTable table, str name, long long value):
    members = table.members.get(name)
    if members is not None:
        member = (<dict>members).get(value)
        if member is not None:
            return member
    return table.new_member(name, value)


# The status member for a code; success is one attribute read.
cdef inline object status(EnumTable table, long long code):
    if code == 0 and table.success is not None:
        return table.success
    return table.status_member(code)


# The result of a call that returns its status alone, (status,). Tuples are
# immutable, so every success returns the one (success,) tuple: no tuple is
# made and freed per call.
cdef inline tuple status_alone(EnumTable table, long long code):
    if code == 0 and table.success_alone is not None:
        return table.success_alone
    return table.status_alone_tuple(code)
