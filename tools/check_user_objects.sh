#!/bin/sh
# Ring-3 code may only call ring-3 code: every symbol a *_user object needs
# must be defined by another *_user object (linker.ld maps only their pages
# user-accessible). Usage: check_user_objects.sh NM OBJ...
set -eu
NM=$1
shift
[ $# -gt 0 ] || exit 0
defined=$("$NM" -g --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u)
bad=""
for obj in "$@"; do
    for sym in $("$NM" -u "$obj" | awk '{ print $NF }'); do
        printf '%s\n' "$defined" | grep -qx "$sym" || bad="$bad $obj:$sym"
    done
done
if [ -n "$bad" ]; then
    echo "error: ring-3 code calls or reads kernel symbols it cannot reach from ring 3:" >&2
    for b in $bad; do echo "  $b" >&2; done
    exit 1
fi
