# Sphinx configuration of cubind's documentation site: `bash scripts/docs.sh`
# builds it into build/docs/html. The API reference is read from the installed
# package (autodoc) and from core/include/cubind through Doxygen and Breathe, so
# the headers and the generated docstrings stay the one source of truth.
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "cubind"
author = "cubind contributors"
copyright = "cubind contributors"

# Autodoc would read a native module's .pyi stub in place of the module when
# both are installed; the reference is of the modules themselves, so they are
# imported first (the stubs carry the same text).
os.environ["SPHINX_AUTODOC_IGNORE_NATIVE_MODULE_TYPE_STUBS"] = "1"
try:
    import cubind
    import cubind.bindings.driver
    import cubind.bindings.nvjitlink
    import cubind.bindings.nvvm
    import cubind.bindings.nvfatbin
    import cubind.bindings.cufile
    import cubind.bindings.cudla
    import cubind.bindings.nvrtc
    import cubind.bindings.runtime
    import cubind.core
    release = cubind.__version__
except ImportError as e:  # the reference needs the built package
    raise RuntimeError(
        "the documentation is read from the installed cubind package: "
        "pip install --no-build-isolation . first (scripts/docs.sh does)") from e
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "breathe",
    "cubind_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Doxyfile"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"cubind {release}"

# Signatures name builtins (bytes) that are also field names of structs in two
# modules (CUuuid.bytes): those cross-references are ambiguous by nature. The
# namespace cubind is declared once per header page section by Breathe.
suppress_warnings = ["ref.python", "duplicate_declaration.cpp"]

autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"   # the signatures come from the docstrings' first line
autoclass_content = "class"

# Doxygen reads the C++ core's public headers; Breathe renders its XML.
DOXYGEN_OUT = os.environ.get("CUBIND_DOXYGEN_OUT", os.path.join(ROOT, "build", "docs", "doxygen"))
breathe_projects = {"cubind": os.path.join(DOXYGEN_OUT, "xml")}
breathe_default_project = "cubind"
breathe_default_members = ("members",)


def _run_doxygen():
    os.makedirs(DOXYGEN_OUT, exist_ok=True)
    with open(os.path.join(HERE, "Doxyfile")) as f:
        config = f.read()
    config += (f"\nINPUT = {os.path.join(ROOT, 'core', 'include', 'cubind')}\n"
               f"OUTPUT_DIRECTORY = {DOXYGEN_OUT}\n"
               f"INPUT_FILTER = \"{sys.executable} {os.path.join(HERE, '_ext', 'doxygen_filter.py')}\"\n")
    subprocess.run(["doxygen", "-"], input=config.encode(), check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)


_run_doxygen()
