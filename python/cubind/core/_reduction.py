"""Pickling through multiprocessing, registered without importing it.

As in cuda.core, the objects that can cross to another process (IPC-enabled
memory pools and their allocation handles, IPC events) pickle through
multiprocessing alone: their reducers go into multiprocessing's
ForkingPickler (multiprocessing.reduction.register), so pickle.dumps
elsewhere still refuses them. Importing multiprocessing.reduction costs more
than the rest of `import cubind.core` (it brings socket, pickle, ...), and a
program that sends a pool to another process imports it before it pickles
anything. So register() hands a reducer over at once where
multiprocessing.reduction is loaded, and otherwise keeps it until that module
is imported, registering every kept reducer as that import completes."""

import sys

_MODULE = "multiprocessing.reduction"
_pending = []  # (class, reducer), until multiprocessing.reduction is imported


def register(cls, reducer):
    """multiprocessing.reduction.register(cls, reducer), now or once that
    module is imported."""
    reduction = sys.modules.get(_MODULE)
    if reduction is not None and hasattr(reduction, "register"):
        reduction.register(cls, reducer)
        return
    if not _pending:
        sys.meta_path.insert(0, _FINDER)
    _pending.append((cls, reducer))


def _register_pending(reduction):
    while _pending:
        cls, reducer = _pending.pop(0)
        reduction.register(cls, reducer)


class _AfterReductionImport:
    """A finder first on sys.meta_path while reducers wait: it finds
    multiprocessing.reduction through the finders after it, and has the
    module's loader register the reducers once it has run the module."""

    def find_spec(self, name, path=None, target=None):
        if name != _MODULE:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return None  # a loader of the old protocol: let the import go on without us
        own = "exec_module" in getattr(loader, "__dict__", {})

        def exec_then_register(module):
            # The loader's own method again first: a loader may serve other
            # modules too (one frozen importer serves them all).
            if own:
                loader.exec_module = exec_module
            else:
                del loader.exec_module
            exec_module(module)
            if module.__name__ == _MODULE:
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                _register_pending(module)

        loader.exec_module = exec_then_register
        return spec

    def invalidate_caches(self):
        pass


_FINDER = _AfterReductionImport()
