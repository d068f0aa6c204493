#!/usr/bin/env bash
# kvstore driven by redis-cli (the real one, from redis-tools): every command, the
# security rules, the command line.
. "$(dirname "$0")/../lib.sh"

command -v redis-cli >/dev/null || { skip "kvstore with redis-cli" "redis-cli missing (make deps)"; finish; }
port=$(pick_port)
"$SPECGEN" kvstore --listen 127.0.0.1:"$port" --memory 64M --io-threads 2 \
    >"$TMPDIR_TEST/kv.log" 2>&1 &
pid=$!
on_exit "kill $pid"
wait_port "$port" || { not_ok "kvstore starts"; cat "$TMPDIR_TEST/kv.log"; finish; }
ok "kvstore starts on a picked port"
R() { redis-cli -p "$port" "$@"; }
# The whole output of redis-cli, lines joined with '|', must match the regex.
is() {
    local desc=$1 want=$2 out; shift 2
    out=$(redis-cli -p "$port" "$@" 2>&1 | tr '\n' '|' | sed 's/|*$//')
    if [[ $out =~ ^${want}$ ]]; then ok "$desc"; else
        not_ok "$desc"; printf '#   redis-cli %s\n#   got:  %s\n#   want: %s\n' "$*" "$out" "$want"; fi
}

is "PING" "PONG" PING
is "PING with a message" "hi" PING hi
is "ECHO" "hello world" ECHO "hello world"
is "SELECT 0" "OK" SELECT 0
is "SELECT 1 is out of range" "ERR DB index is out of range" SELECT 1
is "SET" "OK" SET k1 v1
is "GET" "v1" GET k1
is "GET of a missing key is nil" "" GET missing
is "SET NX on an existing key does nothing" "" SET k1 other NX
is "SET NX on a new key" "OK" SET k2 v2 NX
is "SET XX on a missing key does nothing" "" SET k3 v3 XX
is "SET XX on an existing key" "OK" SET k2 v2b XX
is "the XX write is visible" "v2b" GET k2
is "SET EX" "OK" SET kex v EX 100
check_output "TTL after EX" "^(99|100)$" R TTL kex
is "SET PX" "OK" SET kpx v PX 1500
check_output "TTL after PX rounds to seconds" "^(1|2)$" R TTL kpx
is "SET with a bad expire" "ERR invalid expire time in 'set' command" SET k v EX 0
# Relative times that overflow the absolute one are refused as in Redis, not wrapped.
is "SET PX past the largest time" "ERR invalid expire time in 'set' command" \
    SET k v PX 9223372036854775807
is "SET EX past the largest time" "ERR invalid expire time in 'set' command" \
    SET k v EX 9223372036854775
is "SET EXAT at the largest second" "OK" SET kat v EXAT 9223372036854775
is "SET PXAT at the largest millisecond" "OK" SET kat v PXAT 9223372036854775807
is "the key stays" "v" GET kat
R DEL kat >/dev/null
is "SET with NX and XX is a syntax error" "ERR syntax error" SET k v NX XX
is "TTL without expiry" "-1" TTL k1
is "TTL of a missing key" "-2" TTL nope
is "EXPIRE" "1" EXPIRE k1 50
# 40..50: the seconds left after EXPIRE 50 (a loaded machine may take over a second between
# the two redis-cli calls; a TTL that ignored the EXPIRE would be -1)
check_output "TTL after EXPIRE" "^(4[0-9]|50)$" R TTL k1
is "EXPIRE of a missing key" "0" EXPIRE nope 5
is "PTTL of a key without expiry" "-1" PTTL k2
sleep 1.6
is "a key past its PX expiry is gone" "" GET kpx
is "MSET" "OK" MSET a 1 b 2 c 3
is "MSET with an odd count" "ERR wrong number of arguments for 'mset' command" MSET a 1 b
is "MGET" "1|2||3" MGET a b nope c
is "EXISTS counts every key given" "3" EXISTS a b nope a
is "DEL" "2" DEL a b nope
is "UNLINK" "1" UNLINK c
is "TYPE" "string" TYPE k1
is "DBSIZE" "3" DBSIZE
check_output "SCAN returns a cursor and keys" "^[0-9]+$" bash -c "redis-cli -p $port SCAN 0 COUNT 1000 | head -1"
check_output "redis-cli --scan lists every key (SCAN loop)" "^k1 k2 kex$" \
    bash -c "redis-cli -p $port --scan | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//'"
check_output "SCAN MATCH filters" "^k2$" bash -c "redis-cli -p $port --scan --pattern 'k2*'"
is "SCAN with a bad cursor" "ERR invalid cursor" SCAN x
check_output "KEYS * lists every key" "^k1 k2 kex$" \
    bash -c "redis-cli -p $port KEYS '*' | sort | tr '\n' ' ' | sed 's/ $//'"
is "KEYS with a pattern" "k2" KEYS 'k[2-9]'
is "KEYS with no match" "" KEYS 'zz*'
is "STRLEN" "2" STRLEN k1
is "STRLEN of a missing key" "0" STRLEN nope
R EXPIRE k2 100 >/dev/null
is "PERSIST drops an expiry" "1" PERSIST k2
is "TTL after PERSIST" "-1" TTL k2
is "PERSIST of a key without expiry" "0" PERSIST k2
for s in server clients memory stats keyspace; do
    check_output "INFO $s" "^# ${s^}" R INFO "$s"
done
check_output "INFO memory reports the budget" "maxmemory:67108864" R INFO memory
check_output "INFO keyspace counts keys" "db0:keys=3,expires=2" R INFO keyspace
check_output "INFO with no section has every section" "# Server.*# Keyspace" bash -c "redis-cli -p $port INFO | tr '\n' ' '"
is "CONFIG GET maxmemory" "maxmemory|67108864" CONFIG GET maxmemory
is "CONFIG GET maxmemory-policy" "maxmemory-policy|allkeys-lru" CONFIG GET maxmemory-policy
is "CONFIG SET maxmemory" "OK" CONFIG SET maxmemory 32mb
is "CONFIG GET after SET" "maxmemory|33554432" CONFIG GET maxmemory
is "CONFIG SET maxmemory-policy" "OK" CONFIG SET maxmemory-policy noeviction
is "CONFIG SET of an unknown option" "ERR Unknown option or number of arguments for CONFIG SET - 'bogus'" CONFIG SET bogus 1
check_output "COMMAND lists commands" "^[0-9]+$" R COMMAND COUNT
check_output "COMMAND INFO get" "get" R COMMAND INFO get
is "CLIENT ID" "[0-9]+" CLIENT ID
check_output "CLIENT SETNAME then GETNAME on one connection" "^OK worker-7 $" \
    bash -c "printf 'CLIENT SETNAME worker-7\nCLIENT GETNAME\n' | redis-cli -p $port | tr '\n' ' '"
is "CLIENT SETNAME with a space" "ERR Client names cannot contain spaces, newlines or special characters." CLIENT SETNAME "a b"
is "CLIENT SETINFO" "OK" CLIENT SETINFO LIB-NAME specgen-test
is "CLIENT with an unknown subcommand" "ERR unknown subcommand 'KILLALL'. Try CLIENT HELP." CLIENT KILLALL
check_output "HELLO 2" "^server redis version 7.0.0 proto 2 id [0-9]+ mode standalone role master modules" \
    bash -c "redis-cli -p $port HELLO 2 | tr '\n' ' '"
is "HELLO 4 is refused" "NOPROTO unsupported protocol version" HELLO 4
is "AUTH without a password configured" "ERR AUTH <password> called without any password configured for the default user\\. Are you sure your configuration is correct\\?" AUTH x
# As in Redis (the default user has no password): clients that send a user and password
# anyway, e.g. redis-py from a redis://default:PASS@ URL, still connect.
is "AUTH default with no password configured" "OK" AUTH default anything
is "AUTH of another user with no password configured" "WRONGPASS.*" AUTH bob anything
is "HELLO AUTH default with no password configured" "server\\|redis.*" HELLO 2 AUTH default anything
is "an unknown command" "ERR unknown command 'FROB', with args beginning with: 'x' " FROB x
is "wrong arity" "ERR wrong number of arguments for 'get' command" GET a b
is "FLUSHDB" "OK" FLUSHDB
is "DBSIZE after FLUSHDB" "0" DBSIZE
is "FLUSHALL" "OK" FLUSHALL
is "QUIT" "OK" QUIT
check "a 3 MB value from stdin round-trips (redis-cli -x)" bash -c "
    head -c 3000000 /dev/urandom > $TMPDIR_TEST/v && redis-cli -p $port CONFIG SET maxmemory-policy allkeys-lru >/dev/null &&
    redis-cli -p $port -x SET big < $TMPDIR_TEST/v | grep -qx OK &&
    redis-cli -p $port --no-raw GET big >/dev/null && redis-cli -p $port GET big | head -c 3000000 | cmp - $TMPDIR_TEST/v"
check "redis-benchmark runs against it (SET/GET, pipelined)" \
    redis-benchmark -p "$port" -t set,get -n 2000 -c 4 -P 8 -d 1024 -q

# Security.
pw=$TMPDIR_TEST/pass
# The password is the first line (docs/kv-cache.md): the rest of the file is ignored.
printf 's3cret-pass\r\nnot part of the password\n' >"$pw"
chmod 600 "$pw"
check_output "listening beyond loopback without a password is refused" \
    "refusing to listen on 0.0.0.0 without a password" "$SPECGEN" kvstore --listen 0.0.0.0:0 --memory 8M
check_fails "and exits 1" 1 "$SPECGEN" kvstore --listen 0.0.0.0:0 --memory 8M
p2=$(pick_port)
"$SPECGEN" kvstore --listen 0.0.0.0:"$p2" --memory 8M --requirepass-file "$pw" >"$TMPDIR_TEST/kv2.log" 2>&1 &
pid2=$!
on_exit "kill $pid2"
wait_port "$p2" && ok "with --requirepass-file it listens on 0.0.0.0" || not_ok "with --requirepass-file it listens on 0.0.0.0"
check_output "commands before AUTH are refused" "^NOAUTH Authentication required.$" redis-cli -p "$p2" GET x
check_output "a wrong password is refused" "WRONGPASS" redis-cli -p "$p2" AUTH wrong
check_output "AUTH password then a command" "^OK PONG $" \
    bash -c "printf 'AUTH s3cret-pass\nPING\n' | redis-cli -p $p2 | tr '\n' ' '"
check_output "AUTH default password (two-argument form)" "^OK PONG $" \
    bash -c "printf 'AUTH default s3cret-pass\nPING\n' | redis-cli -p $p2 | tr '\n' ' '"
check_output "AUTH with another user is refused" "WRONGPASS" redis-cli -p "$p2" AUTH bob s3cret-pass
check_output "HELLO 2 AUTH authenticates" "^server$" redis-cli -p "$p2" HELLO 2 AUTH default s3cret-pass
check_output "redis-cli -a authenticates" "^PONG$" redis-cli --no-auth-warning -a s3cret-pass -p "$p2" PING
printf '\nsecond\n' >"$TMPDIR_TEST/pass-empty"
check_output "a password file whose first line is empty is refused" \
    "pass-empty': its first line holds no password" \
    "$SPECGEN" kvstore --listen 0.0.0.0:0 --memory 8M --requirepass-file "$TMPDIR_TEST/pass-empty"
check_output "a password file from /dev/zero is refused, naming the limit" \
    "/dev/zero: cannot read: larger than the limit of 65536 bytes" \
    timeout 5 "$SPECGEN" kvstore --listen 0.0.0.0:0 --memory 8M --requirepass-file /dev/zero

# File descriptors: each client needs one. With a hard limit below --maxclients (default
# 10000) it serves fewer clients, as Redis does, and refuses the rest with the max-clients
# error, instead of failing accept() in a loop; a low soft limit is raised.
p3=$(pick_port)
(ulimit -n 64 && exec "$SPECGEN" kvstore --listen 127.0.0.1:"$p3" --memory 8M --io-threads 1) >"$TMPDIR_TEST/kv3.log" 2>&1 &
pid3=$!
on_exit "kill $pid3"
wait_port "$p3" || not_ok "kvstore starts with ulimit -n 64"
clients_py='
import socket, sys
socks, replies = [], []
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    socks.append(s)
    try:
        s.sendall(b"PING\r\n")
        replies.append(s.recv(100))
    except OSError as e:
        replies.append(repr(e).encode())
print(" ".join(sorted({r.decode().strip() for r in replies})))'
check_output "with ulimit -n 64 the 70th client gets the max-clients error, none hangs" \
    "^\+PONG -ERR max number of clients reached$" python3 -c "$clients_py" "$p3" 70
check_output "and the log says how many it serves" "serving at most 30 clients" cat "$TMPDIR_TEST/kv3.log"
check "without repeating accept errors (a log of a few lines)" \
    bash -c "[ \$(wc -l <'$TMPDIR_TEST/kv3.log') -lt 10 ]"
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 10100 ]; then
    p4=$(pick_port)
    (ulimit -Sn 64 && exec "$SPECGEN" kvstore --listen 127.0.0.1:"$p4" --memory 8M --io-threads 1) >"$TMPDIR_TEST/kv4.log" 2>&1 &
    pid4=$!
    on_exit "kill $pid4"
    wait_port "$p4" || not_ok "kvstore starts with ulimit -Sn 64"
    check_output "a soft limit of 64 is raised: 100 clients are served" "^\+PONG$" \
        python3 -c "$clients_py" "$p4" 100
else
    skip "a soft limit of 64 is raised" "the hard limit ($(ulimit -Hn)) is below 10100"
fi

# Command line.
check_output "--memory is required" "--memory is required" "$SPECGEN" kvstore
check_output "a bad --memory names the value" "--memory: .*'lots'" "$SPECGEN" kvstore --memory lots
check_output "a bad --backend names it" "--backend: 'gpu' is not host, host-staged or cuda:N" \
    "$SPECGEN" kvstore --memory 8M --backend gpu
check_output "--help explains the memory model" "slab pages" "$SPECGEN" kvstore --help
check_output "the host backend self-test is bit-exact" "64.0 MiB stored and read back bit-exact" \
    "$SPECGEN" kvstore --self-test 64M
if ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 >/dev/null 2>&1; then
    skip "the cuda backend says there is no driver" "an NVIDIA driver is installed here (make gpu-check covers it)"
else
    check_output "without an NVIDIA driver the cuda backend says so" \
        "cuda backend: no NVIDIA driver on this machine" "$SPECGEN" kvstore --memory 1G --backend cuda:0
fi
finish
