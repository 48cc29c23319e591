# Sourced by run-in-guest.sh (UML) and ../qemu/run-in-qemu.sh: what the host
# does before and after a guest, the same for both machines. guest-init.sh
# is the guest's side.
#
#   write_share SHARE CPU_MHZ COMMAND...
#       cmd.sh, env.sh and lab.sh for guest-init.sh, from COMMAND, the
#       caller's exported environment and its TIMEOUT, DEVICES, DISK and RW
#   make_disk IMAGE SIZE
#       a sparse ext4 image, formatted here: the host's mkfs takes a blink,
#       the guest's half a minute
#   command_status NAME SHARE LOG ELAPSED
#       the command's exit status, where the guest wrote one (with the boot
#       and run times under TIMES=1), else fails

write_share() {
    local share=$1 mhz=$2
    shift 2
    printf '%q ' "$@" > "$share/cmd.sh"; echo >> "$share/cmd.sh"
    # The caller's exported environment (PATH, RFTP_BUILD...), minus what
    # describes the host shell itself.
    export -p | grep -Ev '^declare -[a-zA-Z]*x[a-zA-Z]* (PWD|OLDPWD|SHLVL|_|BASHOPTS|SHELLOPTS|BASH_[A-Z_]*)(=|$)' \
        > "$share/env.sh"
    {
        printf 'LAB_CWD=%q\n' "$PWD"
        printf 'LAB_TIMEOUT=%q\n' "$TIMEOUT"
        printf 'LAB_MTU=9000\n'
        printf 'LAB_DEVICES=%q\n' "$DEVICES"
        printf 'LAB_CPU_MHZ=%q\n' "$mhz"
        printf 'LAB_RW_DIRS=('; printf '%q ' "${RW[@]}"; printf ')\n'
        printf 'LAB_DISK=%q\n' "${DISK:+/run/disk}"
    } > "$share/lab.sh"
}

make_disk() {
    truncate -s "$2" "$1" &&
        /usr/sbin/mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 "$1"
}

command_status() {
    local name=$1 share=$2 log=$3 elapsed=$4 rc
    [[ -f $share/rc ]] || return 1
    rc=$(<"$share/rc")
    ((TIMES)) && echo "$name: booted in $(cat "$share/boot-seconds" 2>/dev/null) s (guest uptime at command start)," \
        "${elapsed} s in all, rc=$rc; $(sed -n 's/^LAB_SPEED_TEXT="\(.*\)"$/\1/p' "$share/speed" 2>/dev/null)" >&2
    if [[ $rc = 126 ]]; then
        echo "$name: RDMA device setup failed in the guest; console tail:" >&2
        grep -v '^$' "$log" | tail -20 >&2
    fi
    echo "$rc"
}
