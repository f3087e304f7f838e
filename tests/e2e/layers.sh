#!/usr/bin/env bash
# The include rules of docs/architecture.md hold, for every .c and .h below src/ at any depth:
# - includes name their folder from src/ ("actions/stack/stack.h") or a file beside them ("stack.h"), never ../;
# - the layers point down only: util <- collect <- actions <- render <- model <- api <- ui <- app;
# - inside actions/, the rooms form a one-way graph (ROOMS below): stack and dump use target, never each other;
#   profile uses stack; runtimes use stack and profile's report only; the runtime families (go, jvm, agent) never
#   include one another; capture (a process's stack or profile, from its runtime or natively) uses stack, profile
#   and runtimes, and nothing in actions/ uses it;
# - outside actions/, a room is seen through its API header only (PUBLIC below), so no front end names an
#   elfutils type;
# - the native agent (src/agent) lives inside other programs and includes nothing of diagtop's.
. "$(dirname "$0")/../lib.sh"

RULES=$(mktemp); COPY=$(mktemp -d); trap 'rm -rf "$RULES" "$COPY"' EXIT
cat >"$RULES" <<'PY'
import os, re, sys
src = sys.argv[1]
LAYERS = ["util", "collect", "actions", "render", "model", "api", "ui", "app"]
# room of actions/ -> the rooms (or single headers, "room/file.h") it may include
ROOMS = {
    "target":   [],
    "lang":     ["target"],
    "stack":    ["target", "lang"],
    "dump":     ["target"],
    "profile":  ["target", "stack", "lang"],
    "runtimes": ["stack", "profile/cpu_report.h"],
    "offline":  ["target", "stack", "dump", "lang", "runtimes"],
    "capture":  ["stack", "profile", "runtimes", "target"],
}
FAMILIES = ["go", "jvm", "agent"]  # below runtimes/: each may use runtimes/*.h, never a sibling family
# What a layer above actions/ may include of it: each room's API header, and the plain data it returns.
PUBLIC = {"target/process_control.h", "target/signal_trap.h", "stack/stack.h", "stack/frame.h", "dump/dump.h",
          "profile/cpu_profile.h", "profile/cpu_report.h", "runtimes/provider.h", "runtimes/results.h",
          "runtimes/heap_site.h",  # the --drop-frames rule, checked where the option is read
          "capture/capture.h", "offline/heap_analysis.h", "offline/core_report.h", "offline/core_notes.h", "offline/core_auxv.h", "offline/glibc_heap.h", "offline/core_diff.h"}

def place(rel):
    """(layer, room, family) of a path relative to src/."""
    parts = rel.split("/")
    layer = parts[0]
    room = parts[1] if layer == "actions" and len(parts) > 2 else None
    family = parts[2] if room == "runtimes" and len(parts) > 3 else None
    return layer, room, family

bad = []
seen = 0
for dirpath, _, names in os.walk(src):
    for name in sorted(names):
        if not name.endswith((".c", ".h")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, src)
        layer, room, family = place(rel)
        seen += 1
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path).read(), re.M):
            where = "%s includes %s" % (rel, inc)
            if layer == "agent":
                if "/" in inc and inc != "../../include/diagtop-agent.h":
                    bad.append(where + ": the agent must stand alone")
                continue
            if inc.startswith("../") or "/../" in inc:
                bad.append(where + ": name the folder from src/, not with ../")
                continue
            if "/" not in inc:
                if not os.path.exists(os.path.join(dirpath, inc)):
                    bad.append(where + ": no such file beside it")
                continue
            if not os.path.exists(os.path.join(src, inc)):
                bad.append(where + ": no such file below src/")
                continue
            ilayer, iroom, ifamily = place(inc)
            if layer not in LAYERS:
                bad.append("%s: a folder the layering does not know" % rel)
                break
            if ilayer not in LAYERS or LAYERS.index(ilayer) > LAYERS.index(layer):
                bad.append(where + ": it points up the layers")
            elif ilayer == "actions" and layer != "actions":
                if inc.split("/", 1)[1] not in PUBLIC:
                    bad.append(where + ": outside actions/, include a room's API header only")
            elif ilayer == "actions":
                if room not in ROOMS:
                    bad.append("%s: a room of actions/ the rules do not know" % rel)
                elif iroom not in ROOMS:
                    bad.append(where + ": a room of actions/ the rules do not know")
                elif iroom == room:
                    if family and ifamily and ifamily != family:
                        bad.append(where + ": runtime families never include one another")
                    elif ifamily and ifamily not in FAMILIES:
                        bad.append(where + ": a runtime family the rules do not know")
                elif iroom not in ROOMS[room] and inc.split("/", 1)[1] not in ROOMS[room]:
                    bad.append(where + ": %s/ may not use %s/" % (room, iroom))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad or seen < 100 else 0)
PY
check "includes follow the layers, the rooms of actions/ and their API headers" python3 "$RULES" "$ROOT/src"

# The rules can fail: a tree with a file that breaks one of them is refused (a copy of src/).
for breach in "actions/dump/dump.c:#include \"actions/stack/stack.h\"" \
              "actions/runtimes/go/gops_client.c:#include \"actions/runtimes/jvm/hsperf.h\"" \
              "render/stack_text.c:#include \"actions/stack/modules.h\"" \
              "util/text.c:#include \"collect/procstat.h\"" \
              "agent/heapprof.c:#include \"util/text.h\"" \
              "ui/tui.c:#include \"../app/options.h\""; do
    file=${breach%%:*} line=${breach#*:}
    rm -rf "$COPY/src" && cp -r "$ROOT/src" "$COPY/src" && echo "$line" >>"$COPY/src/$file"
    check "refused: $file with $line" bash -c "! python3 '$RULES' '$COPY/src' 2>/dev/null"
done
finish
