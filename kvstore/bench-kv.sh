#!/usr/bin/env bash
# bench-kv: kvstore and redis-server side by side, driven by redis-benchmark with the
# same settings, for SET and GET at 4 KiB, 256 KiB, 1 MiB and 4 MiB values, several
# clients, without and with pipelining. Prints requests/s and p99 latency of both and
# the ratio kvstore / redis-server. Goal (issue #7): >= 1.5x for values >= 256 KiB with
# p99 no worse. Usage: kvstore/bench-kv.sh [SPECGEN] (CLIENTS=8 IO_THREADS=... to vary).
set -u
SPECGEN=${1:-./specgen}
CLIENTS=${CLIENTS:-8}
for t in redis-server redis-benchmark; do
    command -v $t >/dev/null || { echo "bench-kv: $t missing (make deps installs redis-server, redis-tools)"; exit 1; }
done
pick() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() { for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
tmp=$(mktemp -d)
kv_port=$(pick)
rs_port=$(pick)
kv_args=(--listen 127.0.0.1:"$kv_port" --memory 3G)
[ -n "${IO_THREADS:-}" ] && kv_args+=(--io-threads "$IO_THREADS")
"$SPECGEN" kvstore "${kv_args[@]}" >"$tmp/kv.log" 2>&1 &
kv_pid=$!
redis-server --port "$rs_port" --bind 127.0.0.1 --save '' --appendonly no \
    --maxmemory 3gb --maxmemory-policy allkeys-lru >"$tmp/rs.log" 2>&1 &
rs_pid=$!
trap 'kill $kv_pid $rs_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
wait_port "$kv_port" || { echo "bench-kv: kvstore did not start"; cat "$tmp/kv.log"; exit 1; }
wait_port "$rs_port" || { echo "bench-kv: redis-server did not start"; cat "$tmp/rs.log"; exit 1; }
echo "kvstore:      $(head -1 "$tmp/kv.log" | sed 's/.*serving on //')"
echo "redis-server: $(redis-server --version | cut -d' ' -f1-3), io-threads 1 (default), $(nproc) CPUs"
echo "redis-benchmark -c $CLIENTS, keyspace -r; SET then GET on the same keys; a warm-up run precedes each"
echo

# run PORT SIZE N P -> "set_rps set_p99 get_rps get_p99"
run() {
    local out
    out=$(redis-benchmark -p "$1" -t set,get -d "$2" -n "$3" -P "$4" -c "$CLIENTS" -r "$5" --csv 2>/dev/null)
    awk -F'","' '/^"SET"/{s=$2; sp=$7} /^"GET"/{g=$2; gp=$7} END{gsub(/"/,"",sp); gsub(/"/,"",gp); print s+0, sp+0, g+0, gp+0}' <<<"$out"
}
printf '%-8s %-3s %-4s %14s %14s %7s %12s %12s\n' size P op "kvstore req/s" "redis req/s" ratio "kv p99 ms" "redis p99 ms"
met=1
for spec in "4096 40000 10000 4KiB" "262144 3000 200 256KiB" "1048576 800 100 1MiB" "4194304 200 50 4MiB"; do
    read -r size n keys label <<<"$spec"
    for P in 1 16; do
        np=$n; [ "$P" -gt 1 ] && np=$((n * 2))
        # warm-up on both (first-touch page faults, allocator growth), not measured
        run "$kv_port" "$size" $((np / 4)) "$P" "$keys" >/dev/null
        run "$rs_port" "$size" $((np / 4)) "$P" "$keys" >/dev/null
        read -r ks kp kg kgp <<<"$(run "$kv_port" "$size" "$np" "$P" "$keys")"
        read -r rs rp rg rgp <<<"$(run "$rs_port" "$size" "$np" "$P" "$keys")"
        for op in SET GET; do
            if [ $op = SET ]; then a=$ks; ap=$kp; b=$rs; bp=$rp; else a=$kg; ap=$kgp; b=$rg; bp=$rgp; fi
            ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", (b > 0) ? a / b : 0}')
            printf '%-8s %-3s %-4s %14.0f %14.0f %6sx %12.3f %12.3f\n' "$label" "$P" "$op" "$a" "$b" "$ratio" "$ap" "$bp"
            if [ "$size" -ge 262144 ] && ! awk -v r="$ratio" -v a="$ap" -v b="$bp" 'BEGIN{exit !(r >= 1.5 && a <= b)}'; then met=0; fi
        done
    done
done
echo
if [ $met = 1 ]; then echo "goal (>= 1.5x redis-server, p99 no worse, for values >= 256 KiB): met"
else echo "goal (>= 1.5x redis-server, p99 no worse, for values >= 256 KiB): NOT met on this machine"; fi
