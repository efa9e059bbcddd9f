"""Doxygen input filter: the core's headers document declarations with plain
`//` comments; this hands Doxygen the same text as `///` so that the headers
stay the only source of the C++ reference. The file's opening comment (before
the first line of code) becomes the file's description."""
import re
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    lines = f.read().split("\n")

out = []
opening = True
for line in lines:
    stripped = line.lstrip()
    if opening:
        if stripped.startswith("//"):
            out.append("/// " + ("\\file\n/// " if not out else "") + stripped[2:].lstrip())
            continue
        opening = False
    line = re.sub(r"^(\s*)//(?!/)", r"\1///", line)
    # "@throws A, B when ..." names several exceptions, which Doxygen's
    # \exception cannot carry; it is kept as the sentence it is.
    out.append(re.sub(r"^(\s*///.*?)@throws\b", r"\1Throws:", line))
sys.stdout.write("\n".join(out))
