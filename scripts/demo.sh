#!/usr/bin/env bash
# make demo: starts rftpd on loopback (its embedded default config, overlaid
# with a demo user and a free port), moves a sample dataset up and down with
# rftp, verifies every byte, prints the rates, and stops the daemon.
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
rate_of() { python3 -c 'import json,sys; s=json.loads(sys.stdin.read().splitlines()[-1]); print("%.2f GB/s" % (s["bytes"]/max(s["seconds"],1e-9)/1e9))'; }

for streams in 1 4; do
  say "Upload big.bin with $streams stream(s)"
  r=$("$RFTP" --json put -P "$streams" "$work/dataset/big.bin" "$url/big-$streams.bin" | rate_of)
  results+=("upload   ${SIZE_MIB} MiB, $streams stream(s): $r")
  say "Download big-$streams.bin with $streams stream(s)"
  r=$("$RFTP" --json get -P "$streams" "$url/big-$streams.bin" "$work/download/big-$streams.bin" | rate_of)
  results+=("download ${SIZE_MIB} MiB, $streams stream(s): $r")
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

say "Rates (loopback, $(nproc) cores, files in $base)"
printf '  %s\n' "${results[@]}"
say "Stopping rftpd"
kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
echo "transfer log lines written by rftpd: $(grep -c 'event=transfer' "$work/rftpd.log")"
say "Demo OK"
