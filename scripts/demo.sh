#!/usr/bin/env bash
# make demo: starts rftpd on loopback (its embedded default config, overlaid
# with a demo user and a free port), moves a sample dataset up and down with
# rftp, syncs it, verifies every byte, prints the rates beside the machine's
# own limits (loopback TCP, tmpfs writes), and stops the daemon.
set -euo pipefail

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
RFTPD="$BUILD/rftpd"
RFTP="$BUILD/rftp"
SIZE_MIB=${DEMO_SIZE_MIB:-512}

# tmpfs when there is room, so the demo shows the network path, not the disk.
base=/dev/shm
[ -w "$base" ] && [ "$(df --output=avail -m "$base" | tail -1)" -gt $((SIZE_MIB * 4)) ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/rftp-demo.XXXXXX")
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

say "Making a sample dataset in $work/dataset: one ${SIZE_MIB} MiB file and 200 small files"
mkdir -p "$work/dataset/small" "$work/server" "$work/download"
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$work/dataset/big.bin"
for i in $(seq -w 1 20); do head -c $((RANDOM * 4 + 1)) /dev/urandom > "$work/dataset/small/file$i.dat"; done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
password=$(head -c 12 /dev/urandom | base64)
hash=$(printf '%s\n' "$password" | "$RFTPD" --hash-password)
cat > "$work/rftpd.yaml" <<YAML
# Overlays the embedded default (see: rftpd --print-default-config).
listen: [{address: 127.0.0.1, port: $port}]
users:
  - {name: demo, password_hash: "$hash", root: "$work/server", access: read-write}
YAML

say "Starting rftpd on 127.0.0.1:$port (log: $work/rftpd.log)"
"$RFTPD" --config "$work/rftpd.yaml" 2> "$work/rftpd.log" &
daemon_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/rftpd.log"; exit 1; }
  sleep 0.05
done

export RFTP_PASSWORD="$password"
url="rftp://demo@127.0.0.1:$port"
results=()
rate_of() { python3 -c 'import json,sys; s=json.loads(sys.stdin.read().splitlines()[-1]); print("%.2f" % (s["bytes"]/max(s["seconds"],1e-9)/1e9))'; }
rates=()  # "what|GB/s" of the large transfers, compared with the limits at the end

for streams in 1 4; do
  say "Upload big.bin with $streams stream(s)"
  r=$("$RFTP" --json put -P "$streams" "$work/dataset/big.bin" "$url/big-$streams.bin" | rate_of)
  rates+=("upload   ${SIZE_MIB} MiB, $streams stream(s)|$r")
  say "Download big-$streams.bin with $streams stream(s)"
  r=$("$RFTP" --json get -P "$streams" "$url/big-$streams.bin" "$work/download/big-$streams.bin" | rate_of)
  rates+=("download ${SIZE_MIB} MiB, $streams stream(s)|$r")
done

say "Small files: 200 files up and down, 4 sessions (-j 4)"
for i in $(seq -w 1 180); do head -c $((RANDOM + 1)) /dev/urandom > "$work/dataset/small/more$i.dat"; done
start=$(date +%s.%N)
"$RFTP" -q put -r -j 4 "$work/dataset/small" "$url/"
"$RFTP" -q get -r -j 4 "$url/small" "$work/download/"
end=$(date +%s.%N)
results+=("small files: 200 up + 200 down, -j 4: $(python3 -c "print('%.0f files/s' % (400/($end-$start)))")")

say "Verifying byte for byte"
for streams in 1 4; do
  cmp "$work/dataset/big.bin" "$work/server/big-$streams.bin"
  cmp "$work/dataset/big.bin" "$work/download/big-$streams.bin"
done
diff -r "$work/dataset/small" "$work/server/small"
diff -r "$work/dataset/small" "$work/download/small"
remote_hash=$("$RFTP" hash "$url/big-4.bin" | cut -d' ' -f1)
local_hash=$(sha256sum "$work/dataset/big.bin" | cut -d' ' -f1)
[ "$remote_hash" = "$local_hash" ] || { echo "digest mismatch: $remote_hash vs $local_hash"; exit 1; }
echo "all files identical; server SHA-256 of big-4.bin matches: $local_hash"

say "Sync: the dataset to the server, then again after one file changed"
"$RFTP" -q sync "$work/dataset" "$url/synced"
head -c 1000 /dev/urandom >> "$work/dataset/small/file01.dat"
moved=$("$RFTP" --json sync "$work/dataset" "$url/synced" |
        python3 -c 'import json,sys; s=json.loads(sys.stdin.read().splitlines()[-1]); print("%d copied, %d unchanged" % (s["files"]["ok"], s["files"]["unchanged"]))')
"$RFTP" -q check "$work/dataset" "$url/synced"
results+=("sync after one file changed: $moved; rftp check: identical")


say "The machine's limits, measured now"
limits=()
if command -v iperf3 >/dev/null; then
  iport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  iperf3 -s -B 127.0.0.1 -p "$iport" -1 >/dev/null 2>&1 &
  iperf_pid=$!
  sleep 0.3
  tcp=$(iperf3 -c 127.0.0.1 -p "$iport" -t 2 -Z -J 2>/dev/null |
        python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e9))' || echo "")
  wait "$iperf_pid" || true
  [ -n "$tcp" ] && limits+=("loopback TCP, one stream (iperf3 -Z): $tcp GB/s")
fi
# The second of two writes counts, over the first in place: on a virtual
# machine the first touch of memory the guest never used can be several
# times slower than the write itself (0.34 against 2.6 GB/s here), and a
# limit is what the write costs at best.
dd if=/dev/zero of="$work/limit.bin" bs=1M count="$SIZE_MIB" 2>/dev/null
write=$(dd if=/dev/zero of="$work/limit.bin" bs=1M count="$SIZE_MIB" conv=notrunc,fdatasync 2>&1 |
        python3 -c 'import re,sys; t=sys.stdin.read(); m=re.search(r"copied, ([0-9.]+) s", t); print("%.2f" % ('"$SIZE_MIB"'*1048576/float(m.group(1))/1e9))')
rm -f "$work/limit.bin"
limits+=("writing ${SIZE_MIB} MiB to $base (dd): $write GB/s")

say "Limits: a transfer cannot beat the slower of these"
printf '  %s\n' "${limits[@]}"
limit=$(python3 -c 'import sys; print(min(float(x) for x in sys.argv[1:] if x))' ${tcp:-} "$write")
say "Rates (loopback, $(nproc) cores, files in $base), and each as a share of that limit ($limit GB/s)"
for line in "${rates[@]}"; do
  what=${line%%|*}; r=${line##*|}
  printf '  %s: %s GB/s = %s x the limit\n' "$what" "$r" "$(python3 -c "print('%.2f' % ($r / $limit))")"
done
printf '  %s\n' "${results[@]}"
say "Stopping rftpd"
kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
echo "transfer log lines written by rftpd: $(grep -c 'event=transfer' "$work/rftpd.log")"
say "Demo OK"
