# SPDX-License-Identifier: MIT
# Which host directories vm-run.sh must share with the guest, and whether
# it can. Sourced by vm-run.sh and check-testbed.sh, not run.
#
# virtme-ng gives the guest the host's root file system read-only, with
# overlays on /etc /home /lib /opt /srv /tmp /usr /var (the host's files
# show through; what the guest writes there stays in the guest). Then its
# init mounts a new, empty file system over the directories below, hiding
# the host's files there: a checkout under /var/tmp is invisible to the
# guest unless it is shared explicitly (--rwdir/--rodir, which init mounts
# after these, so a share below them works). The list is virtme-ng 1.42's:
# virtme-ng-init's KERNEL_MOUNTS and SYSTEM_MOUNTS, its /lib/modules and
# /etc/lvm mounts, and /root unless virtme-ng runs as root; the bash
# virtme-init mounts the same.
msga_vm_masked_dirs() {
	echo /proc /sys /dev /run /var/log /var/tmp /var/cache \
		/var/spool/rsyslog /var/lib/portables /var/lib/machines \
		/var/lib/private /var/lib/sudo /var/lib/apt /var/lib/snapd/cookie \
		/lib/modules /etc/lvm
	[ "$(id -u)" = 0 ] || echo /root
}

# msga_vm_under PATH DIR: true if PATH is DIR or lies below it
msga_vm_under() {
	[ "$1" = "$2" ] || [[ $1 == "${2%/}"/* ]]
}

# The directory the guest mounts over PATH, or nothing.
msga_vm_masked_by() {
	local dir
	for dir in $(msga_vm_masked_dirs); do
		msga_vm_under "$1" "$dir" && { echo "$dir"; return; }
	done
}

# Why PATH cannot be shared with the guest, or nothing when it can.
msga_vm_unshareable() {
	local path=$1
	if [[ ! $path =~ ^[A-Za-z0-9_+/.-]+$ ]]; then
		# virtme-ng's own check; it also puts the path on the kernel command line
		echo "virtme-ng shares only paths made of letters, digits and _+/.-"
	elif msga_vm_under /tmp "$path"; then
		echo "the guest's /tmp must stay local, as Criterion binds a unix socket there and a 9p share refuses sockets"
	elif msga_vm_under "$path" /proc || msga_vm_under "$path" /sys ||
		{ msga_vm_under "$path" /dev && ! msga_vm_under "$path" /dev/shm; }; then
		echo "the guest mounts its own kernel file system there"
	fi
}

# msga_vm_shares < NEEDS: the vng arguments that share what the guest needs.
# NEEDS has one "rw PATH" (the guest writes there) or "ro PATH" (it only
# reads) line per directory, PATH absolute and without symlinks. An rw
# directory is always shared; an ro one only where the guest masks it. A
# share inside another is dropped (the outer one becomes rw if the inner
# was): nested mounts could be made in either order. Prints one line and
# returns 1 when a directory cannot be shared.
msga_vm_shares() {
	local mode path outer masked why
	local -A want=() inner=()
	while read -r mode path; do
		[ -n "$path" ] || continue
		masked=$(msga_vm_masked_by "$path")
		[ "$mode" = rw ] || [ -n "$masked" ] || continue
		why=$(msga_vm_unshareable "$path")
		if [ -n "$why" ]; then
			echo "vm-run: cannot share $path with the VM${masked:+ (its guest mounts an empty $masked there)}: $why" >&2
			return 1
		fi
		[ "${want[$path]:-}" = rw ] || want[$path]=$mode
	done
	for path in "${!want[@]}"; do
		for outer in "${!want[@]}"; do
			[[ $path == "${outer%/}"/* ]] || continue
			inner[$path]=1
			[ "${want[$path]}" = rw ] && want[$outer]=rw
		done
	done
	for path in "${!want[@]}"; do
		[ -n "${inner[$path]:-}" ] || echo "--${want[$path]}dir $path"
	done
}
