#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian's packages,
# and only what is missing, so `make demo` and `make test` work on a fresh
# Debian 12 machine. Run as root, or with sudo available.
#
#   install-deps.sh           everything: build, tests, benchmarks
#   install-deps.sh runtime   only what building and running rftp needs
#                             (make install: a server gets no test tools,
#                             no vsftpd, no fio)
#   install-deps.sh peers     the peer tools of make bench-wan(-tcp) besides
#                             everything: GridFTP and XRootD
set -euo pipefail

PROFILE="${1:-all}"
case "$PROFILE" in
  all|runtime|peers) ;;
  *) echo "install-deps: unknown profile '$PROFILE' (all, runtime or peers)" >&2; exit 2 ;;
esac

PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config
  # libraries
  libuv1-dev libyaml-cpp-dev libssl-dev libsystemd-dev liburing-dev
  libibverbs-dev librdmacm-dev libcli11-dev nlohmann-json3-dev libisal-dev
  libcrypt-dev
  # RDMA at run time: the verbs providers (mlx5, rxe, siw, ...) and rdma_cm
  ibverbs-providers rdma-core
)
if [ "$PROFILE" != runtime ]; then
  PACKAGES+=(
    # tests
    libgtest-dev python3-pytest curl lftp vsftpd iproute2 strace
    # mkpasswd: yescrypt hashes made outside rftpd (tests/e2e/test_password_hashes.py)
    whois
    # the openssl command: the TLS tests' CA and certificates, and make bench-tls's limit
    openssl
    # a FUSE file system whose syncs fail (tests/e2e/failing_sync_fs.py)
    python3-fuse fuse3
    # a single-node Slurm cluster for the sharded sync test (tests/e2e/slurm_cluster.py)
    slurmctld slurmd slurm-client munge
    # fuzzing (tests/fuzz): clang, libFuzzer, and llvm-symbolizer for its reports
    clang-19 libclang-rt-19-dev llvm-19
    # the RDMA lab (tests/rdma): the tools its checks drive, what builds its
    # UML kernel, and QEMU with busybox for the sanitized guest. Installed
    # here, before any test step, so that the builds started beside the
    # tests (tests/head_start.sh) run no apt-get of their own.
    ibverbs-utils rdmacm-utils perftest flex bison bc linux-source-6.1
    qemu-system-x86 busybox-static kmod cpio
    # benchmarks
    iperf3 fio
    # make bench-sync: the peers of an unchanged-dataset sync
    rsync rclone
  )
fi
if [ "$PROFILE" = peers ]; then
  PACKAGES+=(
    # make bench-wan and bench-wan-tcp: the peers beside rftp at each round trip
    globus-gridftp-server-progs globus-gass-copy-progs xrootd-server xrootd-client
  )
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Servers the tests run as their own instances: their packages would start
# (and enable) system services, vsftpd's on port 21. Keep them from starting.
# Each entry: package, or package:service where the names differ.
SERVICES=(vsftpd munge slurmctld slurmd globus-gridftp-server-progs:globus-gridftp-server)
starts_services=false
for s in "${SERVICES[@]}"; do
  [[ " ${missing[*]} " == *" ${s%%:*} "* ]] && starts_services=true
done
if $starts_services && [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packages also enable their services for every boot: a cleartext FTP
# server on port 21 accepting local passwords, a cluster nobody configured.
# A service installed before is the admin's own and is left as it is.
if command -v systemctl >/dev/null; then
  for s in "${SERVICES[@]}"; do
    [[ " ${missing[*]} " == *" ${s%%:*} "* ]] && $SUDO systemctl disable "${s##*:}.service" >/dev/null 2>&1 || true
  done
fi
