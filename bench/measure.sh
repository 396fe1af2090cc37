# Sourced by the bench/ scripts: measure LABEL SETUP CMD... runs CMD $runs
# times, SETUP (evaluated) before each, and prints a markdown row with the
# median wall time and the peak RSS; uses $work for its scratch files.
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
