# Enum classes of cubind.bindings: int subclasses built from a module's table
# on first use, and the per-module table that converts status codes and enum
# values on every call's return path.


# Enums: int subclasses whose members are created once and compared by
# identity or value. A value the class does not know (a status code of a newer
# driver) still converts: it becomes a member named <Class>_<value>, cached.

class _EnumType(type):
    def __call__(cls, value):
        try:
            return cls._value2member_[value]
        except KeyError:
            pass
        except TypeError:
            raise TypeError(f"{cls.__name__}() takes an int, got {type(value).__name__}") from None
        if isinstance(value, str):
            raise TypeError(f"{cls.__name__}() takes an int, got str (use {cls.__name__}[{value!r}] for a name)")
        try:
            value = _index(value)
        except TypeError:
            raise TypeError(f"{cls.__name__}() takes an int, got {type(value).__name__}") from None
        member = cls._value2member_.get(value)
        if member is None:
            member = _new_member(cls, f"{cls.__name__}_{value}", value)
            cls._value2member_[value] = member
        return member

    def __getitem__(cls, name):
        try:
            return cls._members_[name]
        except KeyError:
            raise KeyError(f"{cls.__name__} has no member {name!r}") from None

    def __iter__(cls):
        return iter(cls._members_.values())

    def __len__(cls):
        return len(cls._members_)

    def __contains__(cls, item):
        if isinstance(item, cls):
            return True
        return isinstance(item, int) and item in cls._value2member_

    def __repr__(cls):
        return f"<enum {cls.__name__!r}>"

    @property
    def __members__(cls):
        return dict(cls._members_)


class Enum(int, metaclass=_EnumType):
    """Base of every cubind enum: an int with a name."""

    _members_ = {}
    _value2member_ = {}

    @property
    def name(self):
        return self._name_

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"<{type(self).__name__}.{self._name_}: {int(self)}>"

    def __str__(self):
        return f"{type(self).__name__}.{self._name_}"

    def __format__(self, spec):
        return int.__format__(int(self), spec)

    def __reduce__(self):
        return (type(self), (int(self),))

    __hash__ = int.__hash__


def _new_member(cls, name, value):
    member = int.__new__(cls, value)
    member._name_ = name
    return member


def make_enum(name, module, names, values, doc=None, strip_prefix=None):
    """Builds an enum class from parallel sequences of member names and values.

    With strip_prefix, each member is also reachable without that prefix
    (nvjitlink.InputType.LTOIR as well as NVJITLINK_INPUT_LTOIR).
    """
    cls = _EnumType(name, (Enum,), {"__module__": module, "__doc__": doc, "__qualname__": name})
    members = {}
    by_value = {}
    for member_name, value in zip(names, values):
        member = by_value.get(value)
        if member is None:
            member = _new_member(cls, member_name, value)
            by_value[value] = member
        members[member_name] = member
        type.__setattr__(cls, member_name, member)
        if strip_prefix and member_name.startswith(strip_prefix) and len(member_name) > len(strip_prefix):
            short = member_name[len(strip_prefix):]
            if not short[0].isdigit():
                if member._name_ == member_name:
                    member._name_ = short
                members[short] = member
                type.__setattr__(cls, short, member)
    type.__setattr__(cls, "_members_", members)
    type.__setattr__(cls, "_value2member_", by_value)
    return cls


# ---------------------------------------------------------------------------
# The enums of one generated module. A module holds hundreds of enum classes and
# most programs touch a few, so each is built at its first use: as a module
# attribute (the module's __getattr__), a converted value or a status code.

cdef class EnumTable:
    """The enum classes of one module: specs, built classes and the member cache."""

    def __init__(self, str module, dict namespace, dict specs, dict prefixes, dict aliases, str status_name):
        # specs: name -> "doc\nNAME VALUE NAME VALUE ..."; prefixes: name -> a member
        # prefix also dropped (nvjitlink); aliases: name -> the enum it names.
        self.module = module
        self.namespace = namespace
        self.specs = specs
        self.prefixes = prefixes
        self.aliases = aliases
        self.status_name = status_name
        self.members = {}
        self.success = None
        self.success_alone = None

    def attribute(self, name):
        """The class `name` (or the one an alias names), built and set in the module."""
        spec = self.specs.get(name)
        if spec is None:
            target = self.aliases.get(name)
            if target is None:
                raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
            cls = self.attribute(target)
        else:
            doc, _, pairs = spec.partition("\n")
            items = pairs.split()
            cls = make_enum(name, self.module, items[0::2], [int(v) for v in items[1::2]], doc or None,
                            self.prefixes.get(name))
        self.namespace[name] = cls
        return cls

    def names(self):
        """The module's names, the enums not yet built included (the module's __dir__)."""
        return sorted(set(self.namespace) | set(self.specs) | set(self.aliases))

    cdef object enum_class(self, str name):
        cls = self.namespace.get(name)
        return cls if cls is not None else self.attribute(name)

    cdef object new_member(self, str name, long long value):
        # The first value of a class converted: cache the class's own value ->
        # member dict, which also gains the members made for unknown values.
        cls = self.enum_class(name)
        self.members[name] = cls._value2member_
        return cls(value)

    cdef object status_member(self, long long code):
        member = enum_member(self, self.status_name, code)
        if code == 0:
            self.success = member
        return member

    cdef tuple status_alone_tuple(self, long long code):
        result = (self.status_member(code),)
        if code == 0:
            self.success_alone = result
        return result
