#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [-o OUTDIR] [-w DIR] [-t SECONDS] [-v] SCRIPT
#
# Boot Debian's Linux 7.2.13 cloud kernel in qemu, with an initramfs only
# (no disk), and run SCRIPT there as root with sh, in an empty directory
# /out. Whatever SCRIPT leaves in /out comes back to OUTDIR on the host,
# together with:
#   guest-status    SCRIPT's exit status
#   guest.log       SCRIPT's stdout and stderr
#   guest-kallsyms  the guest's /proc/kallsyms (for perf --kallsyms=)
#   guest-uname     uname -a of the guest
# Results travel over a virtio-serial port as one tar stream.
#
# The initramfs holds busybox (static), our perf ($PERF, default
# <repo>/build/bin/perf) as /usr/bin/perf, addr2line (perf script/report die
# of SIGPIPE without it) and the shared-library closure (ldd) of both, plus
# the files of DIR (-w) as /work with the closure of any ELF among them.
#
#   -o OUTDIR   where results go (default: a new directory under /tmp)
#   -w DIR      files for the guest, at /work
#   -t SECONDS  kill the guest after this long (default 240)
#   -v          copy the guest console to stderr as it runs
#
# Exit status: SCRIPT's own; 124 if the guest timed out; 125 on a setup
# failure (no qemu, no kernel...), explained on stderr; 126 if the guest
# died without sending results back.
#
# Environment: PERF, CACHE_DIR (default <repo>/cache: kernel, base initramfs),
# QEMU (default qemu-system-x86_64), GUEST_SMP (2), GUEST_MEM (2G),
# GUEST_ACCEL (forces one; by default kvm when /dev/kvm is usable and KVM
# boots here, else tcg,thread=multi: a KVM boot that dies before the guest
# kernel prints anything switches this and later boots on this machine to
# TCG, remembered in GUEST_ACCEL_STATE, default $CACHE_DIR/guest/accel),
# GUEST_KVM_PROBE (30: seconds a first KVM boot may show nothing),
# GUEST_KVM_DEV (/dev/kvm), GUEST_KERNEL (a vmlinuz instead of
# scripts/guest/get-kernel.sh's),
# GUEST_TRIES (3: boots again when the guest kernel oopsed, see below),
# GUEST_LOCK (/tmp/perf-guest-qemu.lock: one guest at a time per machine).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CACHE_DIR:-$top/cache}
perf=${PERF:-$top/build/bin/perf}
qemu=${QEMU:-qemu-system-x86_64}
outdir=
workdir=
timeout_s=240
verbose=0

setup_fail() { echo "guest: setup failed: $*" >&2; exit 125; }
# The usage is this file's header comment, all of it.
usage() { awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "$0" >&2; exit 125; }

while getopts "o:w:t:vh" opt; do
	case "$opt" in
	o) outdir=$OPTARG ;;
	w) workdir=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	v) verbose=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
script=$1
[ -f "$script" ] || setup_fail "script $script not found"
[ -z "$workdir" ] || [ -d "$workdir" ] || setup_fail "-w $workdir is not a directory"

command -v "$qemu" > /dev/null ||
	setup_fail "$qemu not found: install qemu-system-x86 (scripts/install-deps.sh)"
for t in cpio ldd timeout flock; do
	command -v $t > /dev/null || setup_fail "$t not found (scripts/install-deps.sh)"
done
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || setup_fail "busybox not found: install busybox-static (scripts/install-deps.sh)"
ldd "$busybox" > /dev/null 2>&1 &&
	setup_fail "$busybox is dynamically linked: install busybox-static (scripts/install-deps.sh)"
[ -x "$perf" ] || setup_fail "perf $perf not found: run make (or set PERF=)"
perf=$(readlink -f "$perf")
addr2line=$(command -v addr2line || true)
[ -n "$addr2line" ] || setup_fail "addr2line not found: install binutils"

if [ -n "${GUEST_KERNEL:-}" ]; then
	kernel=$GUEST_KERNEL
	[ -f "$kernel" ] || setup_fail "GUEST_KERNEL $kernel not found"
else
	kernel=$("$top/scripts/guest/get-kernel.sh") || setup_fail "no guest kernel (see above)"
fi

tmp=$(mktemp -d /tmp/guest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Copy ELF files' shared-library closure into the staging root $1, at the
# paths ldd prints (file contents, not symlinks).
closure() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		ldd "$f" 2> /dev/null | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]+ \(/ { print $1 }'
	done | sort -u | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

is_elf() { [ "$(head -c 4 "$1" 2> /dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# cpio (newc) of a staging directory, padded to a 4-byte multiple so that
# another archive can follow it.
mkcpio() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$2"
	local pad=$(( (4 - $(stat -c %s "$2") % 4) % 4 ))
	head -c $pad /dev/zero >> "$2"
}

# The base initramfs (busybox, perf, addr2line, libraries, /init) only
# changes with those; cache it by their content.
key=$( { sha256sum "$perf" "$addr2line" "$busybox" "$0"; ldd "$perf" "$addr2line"; } |
	sha256sum | cut -c1-16)
base=$cache/guest/base-$key.cpio
if [ ! -f "$base" ]; then
	mkdir -p "$cache/guest"
	rm -f "$cache"/guest/base-*.cpio
	r=$tmp/base
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,out,work,root}
	cp "$busybox" "$r/bin/busybox"
	cp "$perf" "$r/usr/bin/perf"
	cp "$addr2line" "$r/usr/bin/addr2line"
	closure "$r" "$perf" "$addr2line"
	cat > "$r/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s
mount -t devtmpfs dev /dev
exec 0< /dev/console 1> /dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts && mount -t devpts pts /dev/pts
export PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root
port=
for p in /sys/class/virtio-ports/*; do
	[ "$(cat "$p/name" 2> /dev/null)" = results ] && port=/dev/${p##*/}
done
echo "guest: $(uname -r), $(nproc) CPUs, results port ${port:-missing}"
cd /out
sh /work/.guest-script > /out/guest.log 2>&1
echo $? > /out/guest-status
echo "guest: script exited $(cat /out/guest-status)"
cat /proc/kallsyms > /out/guest-kallsyms
uname -a > /out/guest-uname
if [ -n "$port" ]; then
	tar -cf - -C /out . > "$port"
	sync
fi
poweroff -f
EOF
	chmod +x "$r/init"
	mkcpio "$r" "$base.tmp"
	mv "$base.tmp" "$base"
fi

# The per-run part: the script and -w files, appended to the base.
w=$tmp/work
mkdir -p "$w/work"
if [ -n "$workdir" ]; then
	cp -a "$workdir/." "$w/work/"
	elves=()
	while IFS= read -r -d '' f; do
		is_elf "$f" && elves+=("$f")
	done < <(find "$w/work" -type f -print0)
	if [ ${#elves[@]} -gt 0 ]; then
		closure "$tmp/libs" "${elves[@]}"
		[ -d "$tmp/libs" ] && cp -an "$tmp/libs/." "$w/"
	fi
fi
cp "$script" "$w/work/.guest-script"
mkcpio "$w" "$tmp/work.cpio"
cat "$base" "$tmp/work.cpio" > "$tmp/initrd"

# The accelerator. GUEST_ACCEL forces one. Otherwise KVM when /dev/kvm
# is usable, unless a KVM boot has already died on this machine: under
# nested virtualization /dev/kvm opens and a "-machine none" probe passes,
# yet every real boot aborts at once ("failed to set MSR 0x10a"). Only a
# boot proves KVM, so the first one decides (see boot() below)
# and the verdict is kept in $accel_state, keyed by what it depends on.
accel_state=${GUEST_ACCEL_STATE:-$cache/guest/accel}
kvm_dev=${GUEST_KVM_DEV:-/dev/kvm}
host_key=$( { uname -r; "$qemu" --version 2> /dev/null | head -n 1;
	      grep -m 1 '^model name' /proc/cpuinfo; } | sha256sum | cut -c1-16)
accel=${GUEST_ACCEL:-}
accel_auto=0
if [ -n "$accel" ]; then
	accel_why="GUEST_ACCEL"
elif [ -f "$accel_state" ] && [ "$(cut -d' ' -f1 "$accel_state")" = "$host_key" ]; then
	accel=$(cut -d' ' -f2 "$accel_state")
	accel_why="remembered in $accel_state: $(cut -d' ' -f3- "$accel_state")"
elif [ -r "$kvm_dev" ] && [ -w "$kvm_dev" ] &&
     echo quit | timeout 20 "$qemu" -accel kvm -machine none -nodefaults \
	   -display none -monitor stdio > /dev/null 2>&1; then
	accel=kvm
	accel_auto=1
	accel_why="$kvm_dev is usable; the first boot decides"
else
	accel=tcg,thread=multi
	accel_why="$kvm_dev is not usable"
fi
echo "guest: accelerator $accel ($accel_why)" >&2

remember_accel() {
	mkdir -p "$(dirname "$accel_state")"
	echo "$host_key $1 $2" > "$accel_state.tmp" && mv "$accel_state.tmp" "$accel_state"
}

# One boot; qemu's exit status in $rc. The first boot of an unproven KVM
# is watched: it died early when qemu exits non-zero (not a timeout) or
# reports a KVM error (it then sits paused: "KVM internal error ...
# emulation failure") before the serial console shows anything, or when
# the console is still empty after GUEST_KVM_PROBE seconds (30; a KVM
# guest's /init prints within a second or two). $early says why.
kvm_probe_s=${GUEST_KVM_PROBE:-30}
early=
boot() {
	local pid n=0
	early=
	set +e
	timeout -k 5 "$timeout_s" "$qemu" -accel "$accel" -cpu max \
		-smp "${GUEST_SMP:-2}" -m "${GUEST_MEM:-2G}" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$tmp/initrd" \
		-append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=4" \
		-serial "file:$tmp/console.log" \
		-device virtio-serial-pci \
		-chardev "file,id=results,path=$tmp/results.tar" \
		-device virtserialport,chardev=results,name=results \
		> "$tmp/qemu.log" 2>&1 &
	pid=$!
	while [ $accel_auto = 1 ] && [ ! -s "$tmp/console.log" ] && kill -0 $pid 2> /dev/null; do
		if grep -qE 'KVM internal error|emulation failure|failed to set MSR' "$tmp/qemu.log"; then
			early="qemu reported: $(grep -m 1 . "$tmp/qemu.log" | cut -c1-160)"
		elif [ $n -ge $((kvm_probe_s * 10)) ]; then
			early="nothing on the console after ${kvm_probe_s}s"
		fi
		if [ -n "$early" ]; then
			kill $pid 2> /dev/null
			break
		fi
		sleep 0.1
		n=$((n + 1))
	done
	wait $pid
	rc=$?
	set -e
	if [ $accel_auto = 1 ] && [ -z "$early" ] && [ $rc != 0 ] && [ $rc != 124 ] &&
	   [ $rc != 137 ] && [ ! -s "$tmp/console.log" ]; then
		early="qemu exited $rc: $(grep -m 1 . "$tmp/qemu.log" | cut -c1-160)"
	fi
}

# One guest at a time on this machine, whoever starts it: the CPUs are
# shared, and TCG takes all it can get.
lock=${GUEST_LOCK:-/tmp/perf-guest-qemu.lock}
exec 9>> "$lock"
if ! flock -n 9; then
	echo "guest: waiting for the other guest to finish ($lock)" >&2
	flock 9
fi

oops='BUG:|Oops|invalid opcode|general protection|Kernel panic'
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d /tmp/guest-out.XXXXXX)
fi
mkdir -p "$outdir"

# Multi-threaded TCG now and then runs a half-patched jump label (a
# static key flipped by perf while the other vCPU executes it) and the
# guest kernel oopses: that is a property of the emulator, not of what
# is under test, so a guest that oopsed is booted again, up to
# GUEST_TRIES times in all. Those boots are single-threaded TCG (both
# vCPUs on one host thread: slower, but a vCPU never runs code another
# is patching), unless GUEST_ACCEL chose the accelerator.
tries=${GUEST_TRIES:-3}
try=0
while [ $try -lt "$tries" ]; do
	try=$((try + 1))
	: > "$tmp/results.tar"
	: > "$tmp/console.log"
	if [ $verbose = 1 ]; then
		tail -f "$tmp/console.log" >&2 &
		tailpid=$!
	fi
	boot
	[ $verbose = 1 ] && kill "$tailpid" 2> /dev/null
	cp "$tmp/console.log" "$outdir/guest-console.log"

	if [ $accel_auto = 1 ]; then
		accel_auto=0
		if [ -n "$early" ]; then
			why="a KVM boot died before the guest kernel started: $early"
			echo "guest: $why" >&2
			echo "guest: accelerator tcg,thread=multi from now on on this machine (kept in $accel_state; GUEST_ACCEL=kvm forces KVM)" >&2
			remember_accel tcg,thread=multi "$why"
			accel=tcg,thread=multi
			# Not a try of its own: boot again at once, under TCG.
			try=$((try - 1))
			continue
		fi
	fi
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "guest: timed out after ${timeout_s}s; console tail:" >&2
		tail -n 20 "$tmp/console.log" >&2
		exit 124
	fi
	if [ $rc != 0 ]; then
		echo "guest: $qemu exited $rc:" >&2
		cat "$tmp/qemu.log" >&2
		tail -n 20 "$tmp/console.log" >&2
		exit 125
	fi
	if tar -xf "$tmp/results.tar" -C "$outdir" 2> "$tmp/tar.err" &&
	   [ -f "$outdir/guest-status" ]; then
		break
	fi
	echo "guest: no results came back from the guest (console: $outdir/guest-console.log):" >&2
	if grep -qE "$oops" "$tmp/console.log"; then
		grep -m 1 -A 12 -E "$oops" "$tmp/console.log" >&2
		if [ "$try" -lt "$tries" ]; then
			if [ "$accel" = tcg,thread=multi ] && [ -z "${GUEST_ACCEL:-}" ]; then
				accel=tcg,thread=single
			fi
			echo "guest: the guest kernel oopsed (try $try of $tries), booting again ($accel)" >&2
			continue
		fi
	else
		tail -n 30 "$tmp/console.log" >&2
	fi
	exit 126
done
echo "guest: results in $outdir" >&2
exit "$(cat "$outdir/guest-status")"
