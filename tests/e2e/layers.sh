#!/usr/bin/env bash
# The layers of docs/architecture.md hold: every #include of a sibling directory points down, in the order
# util <- collect <- actions <- render <- model <- api <- ui <- app (so no ui file includes app, and no lower layer
# includes a higher one). The native agent (src/agent) lives inside other programs and includes nothing of
# diagtop's.
. "$(dirname "$0")/../lib.sh"

check "includes point down the layers only" python3 - "$ROOT/src" <<'PY'
import glob, os, re, sys
order = ["util", "collect", "actions", "render", "model", "api", "ui", "app"]
bad = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.[ch]"))):
    layer = os.path.basename(os.path.dirname(path))
    if layer == "agent":
        for inc in re.findall(r'#include "\.\./(\w+)/', open(path).read()):
            bad.append("%s includes %s/: the agent must stand alone" % (os.path.relpath(path, sys.argv[1]), inc))
        continue
    if layer not in order:
        bad.append("%s: a directory the layering does not know" % path)
        continue
    for inc in re.findall(r'#include "\.\./(\w+)/', open(path).read()):
        if inc not in order or order.index(inc) > order.index(layer):
            bad.append("%s includes %s/" % (os.path.relpath(path, sys.argv[1]), inc))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
finish
