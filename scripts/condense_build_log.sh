#!/usr/bin/env bash
# A filter for `pip -v` output of cubind's build, which prints every compiler
# line: keeps scikit-build-core's "*** ..." stage lines, ninja's count every
# 10 % (rewritten in place on a terminal), and pip's last word. Used by
# run_main.sh and test.sh:  pip install -v . 2>&1 | bash scripts/condense_build_log.sh
awk -v tty="$([ -t 1 ] && echo 1 || echo 0)" '
  function endline() { if (open) { printf "\n"; open = 0 } }
  /^ *\*\*\* / { endline(); sub(/^ +/, ""); print "  " $0; fflush(); next }
  match($0, /^ *\[[0-9]+\/[0-9]+\]/) {
    s = substr($0, 1, RLENGTH); gsub(/[ \[\]]/, "", s); split(s, c, "/"); pct = int(100 * c[1] / c[2])
    if (c[1] == 1) step = 0
    if (tty) { printf "\r  ninja: %d/%d (%d%%)", c[1], c[2], pct; open = 1 }
    else if (pct >= step || c[1] == c[2]) { printf "  ninja: %d/%d (%d%%)\n", c[1], c[2], pct; step = pct - pct % 10 + 10 }
    fflush(); next }
  /^(Successfully (installed|built)|Saved) / { endline(); print "  " $0; fflush() }
  END { endline() }'
