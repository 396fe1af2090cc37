# Sourced by the bench/ scripts, after they set $repo and $work (their
# scratch folder, a mktemp -d /tmp/cudnnctl-bench*; it is deleted at the
# end, so anything else is refused: sourced by hand with work=/tmp, the
# EXIT trap once emptied /tmp).
case ${work:-} in
/tmp/cudnnctl-bench*) ;;
*)
	echo "bench/measure.sh: \$work must be a mktemp -d /tmp/cudnnctl-bench* folder, not '${work:-}'" >&2
	exit 2
	;;
esac
#
# measure LABEL SETUP CMD... runs CMD $runs times, SETUP (evaluated) before
# each, and prints a markdown row with the median wall time and the peak
# RSS.
measure() { # label setup-cmd cmd...
	local label=$1 setup=$2; shift 2
	local times=() rss=0
	for i in $(seq 1 "$runs"); do
		eval "$setup"
		/usr/bin/time -f '%e %M' -o "$work/t" "$@" >/dev/null 2>&1
		read -r t m <"$work/t"
		times+=("$t")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
	printf '| %s | %s | %s |\n' "$label" "$med" "$((rss / 1024))"
	printf '%s\t%s\n' "$label" "$med" >>"$work/medians"
}

# once LABEL SETUP CMD... runs CMD once, SETUP (evaluated) before it, and
# keeps its wall time, peak RSS, CPU time (user + sys) and the CPU time
# the tests' server spent meanwhile under LABEL; report LABEL prints the
# row of all of LABEL's runs: the medians, and the peak RSS.  Rounds of
# `once` over several commands interleave them, so that a machine whose
# speed drifts between minutes slows each of them alike.
declare -A once_files=()
once_n=0
server_cpu() { # the server's CPU seconds so far (user + sys, all threads)
	if [ -n "${server:-}" ] && [ -r "/proc/$server/stat" ]; then
		# past the ")" of the name: field 3 is $1, utime (14) $12, stime $13
		awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' \
			"/proc/$server/stat"
	else
		echo 0
	fi
}
once() { # label setup-cmd cmd...
	local label=$1 setup=$2 s0 s1; shift 2
	if [ -z "${once_files[$label]:-}" ]; then
		once_n=$((once_n + 1))
		once_files[$label]=$work/once.$once_n
	fi
	eval "$setup"
	s0=$(server_cpu)
	/usr/bin/time -f '%e %M %U %S' -o "$work/t" "$@" >/dev/null 2>&1
	s1=$(server_cpu)
	read -r t m u k <"$work/t"
	echo "$t $m $u $k $s0 $s1" | awk '{ printf "%s %s %.2f %.2f\n", $1, $2, $3 + $4, $6 - $5 }' \
		>>"${once_files[$label]}"
}
# the header of report's rows
report_header() {
	echo "| command | median s | peak RSS MB | CPU s | server CPU s |"
	echo "|---|---|---|---|---|"
}
report() { # label
	local label=$1 f=${once_files[$1]}
	med() { awk -v c="$1" '{print $c}' "$f" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
	printf '| %s | %s | %s | %s | %s |\n' "$label" "$(med 1)" \
		"$(awk '$2>m{m=$2} END{print int(m/1024)}' "$f")" "$(med 3)" "$(med 4)"
	printf '%s\t%s\n' "$label" "$(med 1)" >>"$work/medians"
}

# serve [SERVER-ARGS...] (re)starts the tests' server
# (tests/lib/redist_server.py) on $work/mirror and sets $url; stop_server
# ends it, and the EXIT trap set here ends it and removes $work.
server=
stop_server() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; server=; }
trap 'stop_server; rm -rf "$work"' EXIT
serve() {
	stop_server
	rm -f "$work/port"
	python3 "$repo/tests/lib/redist_server.py" --root "$work/mirror" \
		--port-file "$work/port" "$@" >/dev/null 2>&1 &
	server=$!
	for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
	url=http://127.0.0.1:$(cat "$work/port")/
}
