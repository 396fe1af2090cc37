#!/bin/bash
# The steps of action.yml (the GitHub Action at the repository root):
#
#   action.sh setup     cudnnctl for this runner (the input's binary, the
#                       release matching the action's tag, or a build from
#                       the action's own sources), then which archive the
#                       inputs name: outputs bin, cache-dir, key
#   action.sh install   cudnnctl install in CI mode (it writes the outputs
#                       cudnn-version, cudnn-path, cuda, and GITHUB_ENV /
#                       GITHUB_PATH), then verify with --junit if asked
#
# Inputs come as INPUT_* variables (the action's env), the runner's as
# RUNNER_OS, RUNNER_TEMP, GITHUB_OUTPUT...; ACTION_PATH is the action's
# folder and ACTION_REF the ref it was used at.
set -euo pipefail

die() { echo "::error::cudnnctl action: $*" >&2; exit 1; }
out() { echo "$1=$2" >>"$GITHUB_OUTPUT"; }

temp=${RUNNER_TEMP:-/tmp}
exe=cudnnctl
[ "${RUNNER_OS:-Linux}" = Windows ] && exe=cudnnctl.exe

# the cudnnctl binary, in $bin
get_cudnnctl() {
	local dir=$temp/cudnnctl-bin
	if [ -n "${INPUT_CUDNNCTL:-}" ]; then
		bin=$INPUT_CUDNNCTL
		[ -x "$bin" ] || die "no cudnnctl at '$bin' (the cudnnctl input)"
		return
	fi
	bin=$dir/$exe
	[ -x "$bin" ] && return
	mkdir -p "$dir"
	case ${ACTION_REF:-} in
	v[0-9]*)
		# the release of this tag: the binary and SHA256SUMS, checked
		local ver=${ACTION_REF#v} os=linux ext=tar.gz
		[ "${RUNNER_OS:-Linux}" = Windows ] && os=windows ext=zip
		local name=cudnnctl-$ver-$os-x86_64.$ext
		local base=${GITHUB_SERVER_URL:-https://github.com}/${ACTION_REPOSITORY:-cudnnctl/cudnnctl}/releases/download/$ACTION_REF
		curl -fsSL --retry 3 -o "$dir/$name" "$base/$name" &&
			curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "$base/SHA256SUMS" ||
			die "cannot download $name of release $ACTION_REF"
		(cd "$dir" && grep " $name\$" SHA256SUMS | sha256sum -c --quiet -) ||
			die "$name does not match the release's SHA256SUMS"
		if [ "$ext" = zip ]; then
			(cd "$dir" && unzip -q -o "$name" && find . -name "$exe" -exec mv {} . \;)
		else
			tar -xzf "$dir/$name" -C "$dir" --strip-components=1
		fi
		;;
	*)
		# a branch or a commit: built from the action's own sources
		local build=$temp/cudnnctl-build
		if [ "${RUNNER_OS:-Linux}" = Windows ]; then
			cmake -S "$ACTION_PATH" -B "$build" -A x64 \
				-DCMAKE_TOOLCHAIN_FILE="$VCPKG_INSTALLATION_ROOT/scripts/buildsystems/vcpkg.cmake" >/dev/null &&
				cmake --build "$build" --config Release --target cudnnctl >/dev/null ||
				die "the build from source failed"
			cp "$build/Release/$exe" "$bin"
		else
			local sudo=
			[ "$(id -u)" -ne 0 ] && sudo=sudo
			$sudo sh "$ACTION_PATH/scripts/deps.sh" >/dev/null || die "cannot install the build dependencies"
			cmake -S "$ACTION_PATH" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
				-DCUDNNCTL_TESTS=OFF >/dev/null &&
				cmake --build "$build" --target cudnnctl >/dev/null ||
				die "the build from source failed"
			cp "$build/$exe" "$bin"
		fi
		;;
	esac
	[ -x "$bin" ] || die "no $exe after getting it"
}

# no version input: cudnnctl takes the pin file's (the working folder up)
args=()
[ -n "${INPUT_VERSION:-}" ] && args+=("$INPUT_VERSION")
[ -n "${INPUT_CUDA:-}" ] && args+=(--cuda "$INPUT_CUDA")
[ -n "${INPUT_MIRROR:-}" ] && args+=(--mirror "$INPUT_MIRROR")
# manifest: one per line or comma-separated; blanks around each dropped
while IFS= read -r m; do
	m=${m#"${m%%[![:space:]]*}"}
	m=${m%"${m##*[![:space:]]}"}
	[ -n "$m" ] && args+=("--manifest=$m")
done < <(printf '%s\n' "${INPUT_MANIFEST:-}" | tr ',' '\n')
cache_dir=$temp/cudnnctl-cache
root=${INPUT_ROOT:-$temp/cudnn}

case ${1:-} in
setup)
	get_cudnnctl
	out bin "$bin"
	out cache-dir "$cache_dir"
	# the archive's SHA-256 keys the cache: the same release, the same key
	sha=$("$bin" download "${args[@]}" --cache "$cache_dir" --dry-run --json |
		sed -n 's/.*"sha256":"\([0-9a-f]\{64\}\)".*/\1/p')
	[ -n "$sha" ] || die "cannot tell which archive ${INPUT_VERSION:-the pin file names} is"
	out key "cudnnctl-${RUNNER_OS:-Linux}-$sha"
	out sha256 "$sha"
	;;
install)
	bin=${CUDNNCTL_BIN:?}
	verify=${INPUT_VERIFY:-no-gpu}
	case $verify in
	none) vargs=(--no-verify) ;;
	no-gpu) vargs=(--no-gpu) ;;
	require-gpu) vargs=() ;;
	*) die "verify is none, no-gpu or require-gpu, not '$verify'" ;;
	esac
	"$bin" install "${args[@]}" --cache "$cache_dir" --root "$root" --ci "${vargs[@]}"
	if [ "$verify" = require-gpu ] || [ -n "${INPUT_JUNIT:-}" ]; then
		v=()
		[ "$verify" = require-gpu ] && v+=(--require-gpu)
		[ "$verify" = no-gpu ] && v+=(--no-gpu)
		[ -n "${INPUT_JUNIT:-}" ] && v+=(--junit "$INPUT_JUNIT")
		[ "$verify" = none ] && [ -z "${INPUT_JUNIT:-}" ] || "$bin" verify --root "$root" --ci "${v[@]}"
	fi
	;;
*)
	die "usage: action.sh setup|install"
	;;
esac
