#!/usr/bin/env bash
# The process-explorer page in headless Chromium (tests/tools/cdp_explorer.py): it loads, sorts, filters, opens a
# process and triggers a stack; the screenshot is kept in build/test-artifacts/serve_page.png. And the embedded
# assets in the build are current (build/gen/api_page_data.c is what embed.sh makes of src/api/assets).
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

check "the built api_page_data.c is current" bash -c "'$ROOT/src/api/assets/embed.sh' | cmp -s - '$ROOT/build/gen/api_page_data.c'"
start_target threads "$TARGETS/threads" 3; T=$TARGET_PID
wait_ready threads || fail "target did not start"
serve_start server --tokens "$TOKENS" || fail "server did not start"
mkdir -p "$ROOT/build/test-artifacts"
timeout 120 python3 "$ROOT/tests/tools/cdp_explorer.py" "$URL" "Bearer $ADMIN_TOKEN" "$T" \
    "$ROOT/build/test-artifacts/serve_page.png" "$TMP/chromium" >"$TMP/cdp.out" 2>&1
cat "$TMP/cdp.out"
grep -q '^FAIL' "$TMP/cdp.out" && FAILS=$((FAILS + 1))
check "the driver ran to the end" grep -q 'a screenshot was kept' "$TMP/cdp.out"
check "the page's requests were authenticated (no 401 in the log)" bash -c "! grep -q ' 401 ' '$TMP/server.err'"
check "stops cleanly" serve_stop
finish
