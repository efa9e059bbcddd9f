"""Runs an example of this folder on cubind.core or on NVIDIA's cuda.core.

    python run.py cubind vector_add.py
    python run.py cuda.core vector_add.py

The examples are written for cuda.core (`from cuda.core import ...`); on
cubind the runner swaps that import for cubind.core's and changes nothing
else, which is what makes the pair of runs a check that the API is the same.
"""
import re
import sys
import types

IMPORT = re.compile(r"^(\s*)(from|import)\s+cuda\.core\b", re.MULTILINE)


def source_for(implementation: str, path: str) -> str:
    with open(path) as f:
        source = f.read()
    if implementation == "cuda.core":
        return source
    if implementation == "cubind":
        swapped, count = IMPORT.subn(r"\1\2 cubind.core", source)
        if count == 0:
            raise SystemExit(f"run.py: {path} does not import cuda.core; nothing to swap")
        return swapped
    raise SystemExit(f"run.py: implementation is {implementation!r}; expected 'cubind' or 'cuda.core'")


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit("usage: run.py cubind|cuda.core EXAMPLE.py")
    implementation, path = argv[1], argv[2]
    code = compile(source_for(implementation, path), path, "exec")
    sys.argv = [path]
    # The example runs as the main module, named after its own file, so that
    # multiprocessing's spawn finds its functions in the processes it starts.
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    sys.modules["__main__"] = main_module
    exec(code, main_module.__dict__)


if __name__ == "__main__":
    main(sys.argv)
