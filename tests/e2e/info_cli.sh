#!/usr/bin/env bash
# diagtop info / memstats against a target that knows what it holds: 96 MiB private and 32 MiB shared memory
# touched, 7 extra descriptors, a loopback TCP listener, a second thread, a known and a secret environment
# variable, and a binary deleted after start.
. "$(dirname "$0")/../lib.sh"

cp "$TARGETS/details" "$TMP/details-copy"
start_target details env KNOWN_VAR=hello SECRET_TOKEN=s3cr3t "$TMP/details-copy" 96 32 7; D=$TARGET_PID
wait_ready details || fail "target did not start"
rm "$TMP/details-copy"
PORT=$(sed -n 's/^ready port=\([0-9]*\).*/\1/p' "$TMP/details.out")
MiB=1048576

"$DIAGTOP" info --json "$D" >"$TMP/info.json"
check "exit 0" test $? -eq 0
check "general: exe flagged deleted, cwd, cmdline, parent chain" json_eval "$TMP/info.json" "
    last['general']['exe'].endswith('/details-copy') and last['general']['exe_deleted'] is True and
    last['general']['cmdline'].endswith('details-copy 96 32 7') and last['general']['ppid'] == $$ and
    last['general']['parent_chain'][0]['pid'] == $$ and last['general']['cwd'] == '$PWD'"
check "memory: anonymous >= 96 MiB, shmem about 32 MiB, USS covers both, PSS <= RSS" python3 -c "
import json; d = json.load(open('$TMP/info.json')); m = d['memory']; MiB = $MiB
assert m['rss_anon_bytes'] >= 96*MiB, m
assert abs(m['rss_shmem_bytes'] - 32*MiB) <= 2*MiB, m
assert m['uss_bytes'] >= 127*MiB and m['pss_bytes'] <= m['rss_bytes'] and m['rss_bytes'] >= 128*MiB, m
assert m['rss_peak_bytes'] >= m['rss_bytes'] and m['vm_size_bytes'] >= m['rss_bytes'], m"
check "Kudu's fields map onto the Linux ones" json_eval "$TMP/info.json" "
    last['id'] == $D and last['name'] == 'details-copy' and last['working_set'] == last['memory']['rss_bytes'] and
    last['peak_working_set'] == last['memory']['rss_peak_bytes'] and last['private_memory'] == last['memory']['uss_bytes'] and
    last['virtual_memory'] == last['memory']['vm_size_bytes'] and last['thread_count'] == 2 and
    last['handle_count'] == len(last['fds']['open']) and last['module_count'] >= 1 and last['paged_memory'] == 0 and
    abs(last['total_cpu_time'] - last['user_cpu_time'] - last['privileged_cpu_time']) < 0.011"
check "fds: the 7 extra descriptors and the listening socket with its port" json_eval "$TMP/info.json" "
    sum(1 for f in last['fds']['open'] if f['target'] == '/dev/null' and f['type'] == 'device') >= 7 and
    any(f['type'] == 'socket' and f['target'] == 'tcp 127.0.0.1:$PORT LISTEN' for f in last['fds']['open']) and
    last['fds']['soft_limit'] > 0"
check "threads: main and helper, named" json_eval "$TMP/info.json" "
    sorted(t['name'] for t in last['threads']) == ['details-copy', 'helper']"
check "environment: known value shown, secret masked and listed" json_eval "$TMP/info.json" "
    last['environment']['KNOWN_VAR'] == 'hello' and last['environment']['SECRET_TOKEN'] is None and
    'SECRET_TOKEN' in last['environment_masked']"
check "every key is snake_case (the kernel's limits too), but the environment's names, which are data" \
    json_eval "$TMP/info.json" "
    not bad_keys({k: v for k, v in last.items() if k != 'environment'}) and
    last['general']['limits']['max_open_files']['soft'] != ''"
"$DIAGTOP" info --json --show-secrets --section env "$D" >"$TMP/secrets.json"
check "--show-secrets shows it, --section limits the document" json_eval "$TMP/secrets.json" "
    last['environment']['SECRET_TOKEN'] == 's3cr3t' and 'memory' not in last and 'fds' not in last"
check "modules: libc as a shared object first" json_eval "$TMP/info.json" "
    last['modules'][0]['shared_object'] and any(m['path'].endswith('/libc.so.6') for m in last['modules'])"
cp "/proc/$D/maps" "$TMP/maps.txt"
check "modules: libc's mappings are the ones maps lists (r-x text, rw- data), never a union rwxp" python3 -c "
import json; d = json.load(open('$TMP/info.json'))
libc = [m for m in d['modules'] if m['path'].endswith('/libc.so.6')][0]
want = []
for l in open('$TMP/maps.txt'):
    f = l.split()
    if len(f) >= 6 and f[5] == libc['path']:
        a, b = f[0].split('-')
        want.append(('0x%x' % int(a, 16), '0x%x' % int(b, 16), f[1], '0x%x' % int(f[2], 16), int(b, 16) - int(a, 16)))
got = [(m['start'], m['end'], m['perms'], m['offset'], m['bytes']) for m in libc['mappings']]
assert got == want, (got, want)
perms = [w[2] for w in want]
assert 'r-xp' in perms and 'rw-p' in perms and 'rwxp' not in perms, perms
assert libc['perms'] == ' '.join(perms), libc['perms']
assert libc['mapped_bytes'] == sum(w[4] for w in want), libc
assert all(p['perms'] != 'rwxp' for m in d['modules'] for p in m['mappings'])"
check "io: counters present" json_eval "$TMP/info.json" "last['io']['read_syscalls'] is not None and last['errors'] == {}"
"$DIAGTOP" memstats --json "$D" >"$TMP/mem.json"
check "memstats: the memory section alone" json_eval "$TMP/mem.json" "
    'memory' in last and 'fds' not in last and 'environment' not in last and last['working_set'] > 0"
"$DIAGTOP" info "$D" >"$TMP/info.txt"
check "text: libc's text and data mappings on lines of their own" bash -c "
    grep -A8 '/libc.so.6\$' '$TMP/info.txt' | grep -q '^  [0-9a-f]*-[0-9a-f]* r-xp .* at offset 0x' &&
    grep -A8 '/libc.so.6\$' '$TMP/info.txt' | grep -q '^  [0-9a-f]*-[0-9a-f]* rw-p ' && ! grep -q ' rwxp ' '$TMP/info.txt'"
check "text: a plain target shares all of diagtop's namespaces" bash -c "
    grep -q '^Namespaces apart  *none' '$TMP/info.txt' && grep -q '^NSpid  *$D (diagtop' '$TMP/info.txt' &&
    ! grep '^Namespaces ' '$TMP/info.txt' | grep -q '\*'"
check "json: no namespace differs, one NSpid" json_eval "$TMP/info.json" "
    last['general']['namespaces_differing'] == [] and last['general']['nspid'] == [$D] and
    len(last['general']['namespaces']) >= 7"
check "text: sections and the masked secret" bash -c "grep -q '^== memory' '$TMP/info.txt' &&
    grep -q '^SECRET_TOKEN=\*\*\*\*\*\*\*\*' '$TMP/info.txt' && grep -q 'tcp 127.0.0.1:$PORT LISTEN' '$TMP/info.txt' &&
    grep -q '(deleted)' '$TMP/info.txt'"
"$DIAGTOP" info 999999 >/dev/null 2>"$TMP/gone.err"
check "a PID that does not exist: status 1, clear message" bash -c "[ $? -eq 1 ] && grep -q 'no process 999999' '$TMP/gone.err'"
bad=""
for c in gc heap memstats profile; do
    "$DIAGTOP" $c 999999 >/dev/null 2>"$TMP/gone.$c"; rc=$?
    [ $rc -eq 1 ] && grep -q "^diagtop $c: no process 999999" "$TMP/gone.$c" || bad="$bad $c:$rc:$(head -c 80 "$TMP/gone.$c")"
done
check "gc, heap, memstats, profile of a PID that does not exist: 'no process', not 'not available'" test -z "$bad"
[ -z "$bad" ] || echo "  $bad" >&2
"$DIAGTOP" info --section bogus 1 >/dev/null 2>"$TMP/bad.err"
check "a bad section: status 2" bash -c "[ $? -eq 2 ] && grep -q 'not a list of' '$TMP/bad.err'"

if [ "$(id -u)" -eq 0 ]; then
    env XDG_CONFIG_HOME=/nonexistent setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$DIAGTOP" info --json "$D" >"$TMP/nobody.json" 2>"$TMP/nobody.err"
    check "another user's process: exit 0 with partial fields and reasons" json_eval "$TMP/nobody.json" "
        last['general']['exe'] is None and last['memory']['rss_bytes'] > 0 and last['memory']['pss_bytes'] is None and
        'permission denied' in last['errors']['smaps_rollup'] and 'permission denied' in last['errors']['environment']
        and 'permission denied' in last['errors']['fds'] and last['environment'] == {} and last['handle_count'] is None"
fi
finish
