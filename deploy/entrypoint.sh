#!/bin/sh
# The container's entrypoint: cdprelay serve, configured from the
# environment, so that one image serves every node of a fleet.
#
#   CDPRELAY_ADDR             listen address (default 0.0.0.0:9222)
#   CDPRELAY_STATE_DIR        guids of the instances (default /var/lib/cdprelay)
#   CDPRELAY_CONFIG           config file, used when it exists (default /etc/cdprelay/config.yaml)
#   CDPRELAY_PUBLIC_URL       this node's --public-url, as it is
#   CDPRELAY_PUBLIC_BASE      or the front door's base URL: the node's public URL is
#                             $CDPRELAY_PUBLIC_BASE/relay-N for a pod named <anything>-N
#                             ($POD_NAME, else $HOSTNAME), a StatefulSet's pod
#   CDPRELAY_INSECURE_NO_TLS  1: serve plain HTTP off loopback (TLS ends at the front door)
#   CDPRELAY_LOG_FORMAT       text or json (default text)
#   CDPRELAY_BIN              the relay's binary (default /usr/local/bin/cdprelay)
#
# Arguments are passed on to cdprelay serve after these (--launch, say).
set -eu

bin=${CDPRELAY_BIN:-/usr/local/bin/cdprelay}
config=${CDPRELAY_CONFIG:-/etc/cdprelay/config.yaml}

set -- --addr "${CDPRELAY_ADDR:-0.0.0.0:9222}" \
	--state-dir "${CDPRELAY_STATE_DIR:-/var/lib/cdprelay}" \
	--log-format "${CDPRELAY_LOG_FORMAT:-text}" "$@"

if [ -f "$config" ]; then
	set -- --config "$config" "$@"
fi

public=${CDPRELAY_PUBLIC_URL:-}
if [ -z "$public" ] && [ -n "${CDPRELAY_PUBLIC_BASE:-}" ]; then
	# HOSTNAME is the container's, which docker and Kubernetes set.
	# shellcheck disable=SC3028
	pod=${POD_NAME:-${HOSTNAME:-}}
	ordinal=${pod##*-}
	case $ordinal in
	'' | *[!0-9]*)
		echo "cdprelay entrypoint: CDPRELAY_PUBLIC_BASE is set but the pod's name ${pod:-(none)} does not end in -N (a StatefulSet's pod): set CDPRELAY_PUBLIC_URL instead" >&2
		exit 2
		;;
	esac
	if [ "$pod" = "$ordinal" ]; then
		echo "cdprelay entrypoint: the pod's name $pod has no -N ending: set CDPRELAY_PUBLIC_URL instead" >&2
		exit 2
	fi
	public="${CDPRELAY_PUBLIC_BASE%/}/relay-$ordinal"
fi
if [ -n "$public" ]; then
	set -- --public-url "$public" "$@"
fi

case ${CDPRELAY_INSECURE_NO_TLS:-} in
1 | true | yes) set -- --insecure-no-tls "$@" ;;
'' | 0 | false | no) ;;
*)
	echo "cdprelay entrypoint: CDPRELAY_INSECURE_NO_TLS is 1 or 0, not $CDPRELAY_INSECURE_NO_TLS" >&2
	exit 2
	;;
esac

# exec: the relay gets SIGTERM itself and closes every connection with a
# reason.
exec "$bin" serve "$@"
