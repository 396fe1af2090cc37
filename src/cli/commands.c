/* The command table: every command's name, function, summary, arguments,
 * options (each with a line of description) and how the dispatcher
 * prepares it.  The usage lines and every --help are made from it. */
#include <stddef.h>

#include "cli.h"

#define F(field) offsetof(struct cli_args, field)
#define FLAG(name, field, help) { name, NULL, OPT_FLAG, F(field), NULL, help, NULL, 0 }
#define VALUE(name, kind, field, value, help) \
	{ name, NULL, kind, F(field), value, help, NULL, 0 }
#define END { NULL, NULL, OPT_FLAG, 0, NULL, NULL, NULL, 0 }

static const char *root_default(void)
{
	return cctl_platform_host()->root_help;
}

const struct cli_option cli_common_options[] = {
	{ "--root", NULL, OPT_STR, F(root), "DIR", "install root", root_default, 0 },
	{ "--json", NULL, OPT_FLAG, F(json), NULL, "results (and errors) as JSON on stdout",
	  NULL, 0 },
	{ "--quiet", "-q", OPT_FLAG, F(quiet), NULL, "no progress bar", NULL, 0 },
	{ "--verbose", "-v", OPT_FLAG, F(verbose), NULL,
	  "also say what was left out and why (manifest entries that do not "
	  "fit)", NULL, 0 },
	{ "--ci", NULL, OPT_FLAG, F(ci), NULL,
	  "CI mode: progress as plain lines, the install published to the "
	  "pipeline, profiles and registry left alone (on by itself under "
	  "CI=true, GITHUB_ACTIONS, TF_BUILD)", NULL, 0 },
	{ "--help", "-h", OPT_FLAG, F(help), NULL, "show this help and exit", NULL, 0 },
	END,
};

#define SYSTEM_OPTS                                                            \
	FLAG("--system", system, "activate for every user (as root or "     \
				 "administrator): --scope machine"),        \
	FLAG("--persist", persist, "in CI mode, also change shell profiles " \
				   "or the registry, as outside CI"),       \
	VALUE("--scope", OPT_STR, scope, "user|machine",                       \
	      "whose environment to change (default: user)")
#define WAIT_OPT                                                               \
	VALUE("--wait", OPT_STR, wait, "SECONDS",                              \
	      "when another cudnnctl is using the root, wait up to SECONDS "  \
	      "for it (default: 300; 0: fail at once)")
#define VERIFY_OPTS                                                            \
	FLAG("--no-verify", no_verify, "do not run verify at the end"),        \
	FLAG("--no-gpu", no_gpu, "verify without the GPU stages (driver, "     \
				 "create, convolution)")

static const char *mirror_default(void)
{
	return "$CUDNNCTL_MIRROR, else " CCTL_DEFAULT_MIRROR;
}

static const char *cache_default(void)
{
	return cctl_platform_host()->windows
		       ? "%CUDNNCTL_CACHE%, else %LOCALAPPDATA%\\cudnnctl\\cache"
		       : "$CUDNNCTL_CACHE, else $XDG_CACHE_HOME/cudnnctl or "
			 "~/.cache/cudnnctl";
}

#define CACHE_OPT                                                              \
	{ "--cache", NULL, OPT_STR, F(cache), "DIR",                           \
	  "where downloaded archives and manifests are kept", cache_default, 0 }
#define FETCH_OPTS                                                             \
	{ "--mirror", NULL, OPT_STR, F(mirror), "URL|DIR",                     \
	  "where releases are downloaded from: NVIDIA's redist layout over "   \
	  "http(s), or a folder", mirror_default, 0 },                         \
	CACHE_OPT,                                                             \
	FLAG("--offline", offline, "no network: only built-in and cached "    \
				   "manifests and cached archives")
#define CONNECTIONS_OPT                                                        \
	VALUE("--connections", OPT_INT, connections, "N",                      \
	      "fetch a large archive over N connections at once when the "   \
	      "server honours Range (default: $CUDNNCTL_CONNECTIONS, else 4, " \
	      "at most 16; 1: one)")
#define MANIFEST_OPT                                                           \
	VALUE("--manifest", OPT_LIST, manifests, "FILE",                       \
	      "also trust the releases of this NVIDIA redistrib_*.json, a "   \
	      "file or an https:// URL (repeatable)")

static const struct cli_option install_opts[] = {
	MANIFEST_OPT,
	FLAG("--allow-unknown", allow_unknown,
	     "install an archive no manifest lists, marked unverified"),
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the CUDA build (11, 12, 13) of VERSION; for an unknown archive, "
	      "its CUDA major when the name does not say"),
	FETCH_OPTS,
	CONNECTIONS_OPT,
	VALUE("--jobs", OPT_INT, jobs, "N",
	      "extract with N workers (default: $CUDNNCTL_JOBS, else the number "
	      "of processors, at most 16)"),
	FLAG("--no-activate", no_activate,
	     "keep the active version (the first install is always activated)"),
	VALUE("--platform", OPT_STR, platform, "P",
	      "this machine's platform, when cudnnctl cannot tell (default: "
	      "the machine's own, an arm64 PC's too): windows-x86_64, "
	      "windows-arm64, linux-x86_64, linux-sbsa..."),
	SYSTEM_OPTS,
	VERIFY_OPTS,
	WAIT_OPT,
	END,
};

static const struct cli_option list_opts[] = {
	{ "--available", NULL, OPT_FLAG, F(available), NULL,
	  "the releases the manifests (built in and fetched) know for this "
	  "platform instead, marking those in the cache and those installed",
	  NULL, CLI_OPT_NO_ROOT },
	VALUE("--manifest", OPT_LIST, manifests, "FILE",
	      "with --available: also this NVIDIA redistrib_*.json, a file "
	      "or an https:// URL (repeatable)"),
	CACHE_OPT,
	END,
};

static const struct cli_option download_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N", "the CUDA build (11, 12, 13)"),
	VALUE("--platform", OPT_STR, platform, "P",
	      "the build for another platform: linux-x86_64, linux-sbsa, "
	      "windows-x86_64, windows-arm64 (default: this machine's)"),
	VALUE("--output", OPT_STR, output, "DIR",
	      "also copy the verified archive into DIR"),
	FLAG("--dry-run", dry_run, "say which archive (name, size, sha256, "
				   "URL) without downloading it"),
	MANIFEST_OPT,
	FETCH_OPTS,
	CONNECTIONS_OPT,
	END,
};

static const struct cli_option manifests_opts[] = {
	MANIFEST_OPT,
	FETCH_OPTS,
	END,
};

static const struct cli_option mirror_opts[] = {
	VALUE("--versions", OPT_LIST, versions, "SPEC",
	      "the versions to keep: all, a prefix (9.19) or a range "
	      "('>=9.20,<10'); repeatable, any one selects (needed)"),
	VALUE("--platform", OPT_LIST, platforms, "P",
	      "only this platform (repeatable; default: all)"),
	VALUE("--cuda", OPT_LIST, cudas, "N",
	      "only builds for this CUDA major (repeatable; default: all)"),
	VALUE("--from", OPT_STR, from, "URL|DIR",
	      "the mirror to sync from (default: --mirror, else NVIDIA's)"),
	VALUE("--manifest", OPT_LIST, manifests, "FILE",
	      "also take this NVIDIA redistrib_*.json, a file (a plain-HTTP "
	      "source's manifests cannot be fetched; repeatable)"),
	FLAG("--prune", prune,
	     "remove the manifests and archives the filters no longer choose"),
	FLAG("--dry-run", dry_run, "say what would be fetched and removed"),
	CONNECTIONS_OPT,
	END,
};

static const struct cli_option cache_opts[] = {
	CACHE_OPT,
	END,
};

static const struct cli_option switch_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the variant for CUDA major N, when VERSION matches several"),
	SYSTEM_OPTS,
	VERIFY_OPTS,
	WAIT_OPT,
	END,
};

static const struct cli_option uninstall_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the variant for CUDA major N, when VERSION matches several"),
	FLAG("--force", force, "remove the active version too (and current)"),
	WAIT_OPT,
	END,
};

static const struct cli_option verify_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the variant for CUDA major N, when VERSION matches several"),
	VALUE("--junit", OPT_STR, junit, "FILE",
	      "also write the stages as JUnit test cases to FILE"),
	FLAG("--no-gpu", no_gpu, "stop after the load stage (no driver, "
				 "create, convolution)"),
	FLAG("--require-gpu", require_gpu,
	     "fail (exit 28) when the GPU stages cannot run"),
	FLAG("--full", full, "re-hash every file, not only those whose size "
			     "or times changed"),
	FLAG("--build", build, "also compile, link and run a small C program "
			       "against it ($CC or cc; cl.exe or gcc.exe)"),
	VALUE("--app", OPT_STR, app, "PROGRAM",
	      "instead: which cuDNN PROGRAM (an .exe, .dll, ELF program or "
	      "library) needs, and which copy the loader gives it"),
	FLAG("--run", run, "with --app: also start it (the arguments after --; "
			   "$CUDNNCTL_APP_TIMEOUT s, default 60) and judge every "
			   "cuDNN library it really loads"),
	FLAG("--python", python, "also show which cuDNN each framework of a Python "
				 "environment loads (torch, onnxruntime, ctranslate2, cupy, "
				 "tensorflow, jax); the argument is then the interpreter "
				 "(default: the active venv or conda environment's, else "
				 "python3)"),
	VALUE("--device", OPT_STR, device, "N[,M...]|all",
	      "the GPUs the GPU stages run on, each on its own thread "
	      "(default: the first the driver lists)"),
	END,
};

static const struct cli_option doctor_opts[] = {
	FLAG("--no-gpu", no_gpu, "leave the driver and the GPUs alone"),
	FLAG("--no-redact", no_redact, "show the home folder as it is, not as ~"),
	END,
};

static const struct cli_option env_opts[] = {
	{ "--shell", NULL, OPT_STR, F(shell), "sh|powershell|cmd",
	  "the shell the commands are for", env_default_shell, 0 },
	VALUE("--version", OPT_STR, env_version, "VERSION",
	      "an installed version's set-up instead of the active one's (its "
	      "own folder, as exec gives it)"),
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "with --version: the variant for CUDA major N"),
	END,
};

static const struct cli_option exec_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the variant for CUDA major N, when VERSION matches several"),
	FLAG("--install", install, "install the version first when it is not "
				   "(as install VERSION --no-activate)"),
	FETCH_OPTS,
	MANIFEST_OPT,
	END,
};

static const struct cli_option which_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N",
	      "the variant for CUDA major N, when VERSION matches several"),
	END,
};

static const struct cli_option pin_opts[] = {
	VALUE("--cuda", OPT_INT, cuda, "N", "pin the builds for CUDA major N"),
	FETCH_OPTS,
	END,
};

static const struct cli_option path_opts[] = {
	VALUE("--scope", OPT_STR, scope, "user|machine",
	      "which PATH to put back (default: user)"),
	FLAG("--force", force, "the saved value exactly, even when that drops "
			       "entries other installers added since"),
	WAIT_OPT,
	END,
};

static const struct cli_option history_opts[] = {
	{ "--last", "-n", OPT_INT, F(last), "N", "only the last N changes (-n N too)",
	  NULL, 0 },
	END,
};

static const struct cli_option scan_opts[] = {
	VALUE("--deep", OPT_LIST, deep, "DIR",
	      "also walk the whole tree of DIR (repeatable; links are not "
	      "followed)"),
	VALUE("--time-limit", OPT_INT, time_limit, "N",
	      "stop the --deep walk after N seconds (default: 60)"),
	END,
};

static const struct cli_option quarantine_opts[] = {
	FLAG("--list", list, "what is in quarantine, with where each file was"),
	VALUE("--restore", OPT_STR, restore, "ID|all",
	      "put the files of quarantine ID (all: of every one) back, byte "
	      "for byte"),
	FLAG("--force", force, "move them even while a running program has "
			       "them loaded"),
	WAIT_OPT,
	END,
};

static const struct cli_option deactivate_opts[] = {
	WAIT_OPT,
	END,
};

const struct cli_command cli_commands[] = {
	{ "install", cmd_install, check_install,
	  "verify, extract and activate a cuDNN zip or tar.xz, or the release "
	  "VERSION (9, 9.1, 9.1.0.70) downloaded into the cache first (none "
	  "given: CUDNNCTL_VERSION or the nearest .cudnn-version's)",
	  "[ARCHIVE|VERSION]", 0, 1,
	  CLI_ROOT | CLI_CREATE | CLI_LOCK | CLI_VERIFY_AFTER | CLI_HISTORY, install_opts },
	{ "download", cmd_download, check_download,
	  "fetch and verify the release VERSION (none: the pinned one) into "
	  "the cache without installing it (--dry-run: only say which archive)",
	  "[VERSION]", 0, 1, 0, download_opts },
	{ "manifests", cmd_manifests, check_manifests,
	  "fetch the mirror's redistrib_*.json files not known yet into the "
	  "cache",
	  "update", 1, 1, 0, manifests_opts },
	{ "mirror", cmd_mirror, check_mirror,
	  "sync DIR: a site's mirror in NVIDIA's layout, the manifests byte "
	  "for byte and the archives they name, verified",
	  "sync DIR", 2, 2, 0, mirror_opts },
	{ "cache", cmd_cache, check_cache,
	  "list what the download cache holds, or clean it", "list|clean", 1,
	  1, 0, cache_opts },
	{ "list", cmd_list, NULL,
	  "installed versions (--available: the known releases)", NULL, 0, 0,
	  CLI_ROOT | CLI_ROOT_OPTIONAL, list_opts },
	{ "switch", cmd_switch, check_scope,
	  "make another installed version active (-: the one active before)",
	  "VERSION", 1, 1,
	  CLI_ROOT | CLI_LOCK | CLI_VERIFY_AFTER | CLI_HISTORY, switch_opts },
	{ "uninstall", cmd_uninstall, NULL, "remove an installed version",
	  "VERSION", 1, 1, CLI_ROOT | CLI_LOCK | CLI_HISTORY, uninstall_opts },
	{ "verify", cmd_verify, check_verify,
	  "check that a new process finds, loads and can run the active cuDNN "
	  "(8 timed stages, ending in one convolution on the GPU)",
	  "[VERSION|INTERPRETER]", 0, 1, CLI_ROOT | CLI_ROOT_OPTIONAL | CLI_REST,
	  verify_opts },
	{ "env", cmd_env, check_env,
	  "print the commands that apply the active version to this shell",
	  NULL, 0, 0, CLI_ROOT, env_opts },
	{ "exec", cmd_exec, check_exec,
	  "run a command with an installed version first on the library search "
	  "path (default: the active one), changing nothing",
	  "[VERSION] -- COMMAND [ARGS...]", 0, 1,
	  CLI_ROOT | CLI_ROOT_OPTIONAL | CLI_REST, exec_opts },
	{ "which", cmd_which, NULL,
	  "the installed version that applies here and why: VERSION, else "
	  "CUDNNCTL_VERSION, else the nearest .cudnn-version, else the active "
	  "one (exit 1: not installed)",
	  "[VERSION]", 0, 1, CLI_ROOT, which_opts },
	{ "pin", cmd_pin, check_version_arg,
	  "write ./.cudnn-version: this project uses VERSION (one a manifest "
	  "knows)",
	  "VERSION", 1, 1, 0, pin_opts },
	{ "history", cmd_history, NULL,
	  "every change made to the root, oldest first: when, who, the command, "
	  "the active version before and after",
	  NULL, 0, 0, CLI_ROOT, history_opts },
	{ "link-cuda", cmd_link_cuda, NULL,
	  "place the active version's headers and libraries into a CUDA "
	  "toolkit's folders, for projects that look only there (Linux: links "
	  "through current; Windows: copies), keeping what they replace",
	  "[TOOLKIT]", 0, 1, CLI_ROOT | CLI_LOCK | CLI_HISTORY, deactivate_opts },
	{ "unlink-cuda", cmd_unlink_cuda, NULL,
	  "take out what link-cuda placed and put the toolkit's own files back",
	  NULL, 0, 0, CLI_ROOT | CLI_LOCK | CLI_HISTORY, deactivate_opts },
	{ "deactivate", cmd_deactivate, NULL,
	  "undo the shell set-up; keep the versions", NULL, 0, 0,
	  CLI_ROOT | CLI_LOCK | CLI_HISTORY, deactivate_opts },
	{ "path", cmd_path, check_path,
	  "Windows: put back the PATH saved before cudnnctl first changed it",
	  "restore", 1, 1, CLI_ROOT | CLI_LOCK | CLI_HISTORY, path_opts },
	{ "scan", cmd_scan, NULL,
	  "find every cuDNN copy on this machine: version, CUDA major, owner, "
	  "whether it is complete and whether a new process finds it before "
	  "the active version",
	  NULL, 0, 0, CLI_ROOT | CLI_ROOT_OPTIONAL, scan_opts },
	{ "quarantine", cmd_quarantine, check_quarantine,
	  "move hand-copied cuDNN files (or a folder's) out of the loader's "
	  "way into the root, with an undo (--restore)",
	  "[PATH...]", 0, 16, CLI_ROOT | CLI_CREATE | CLI_LOCK | CLI_HISTORY,
	  quarantine_opts },
	{ "doctor", cmd_doctor, NULL,
	  "one screen for a bug report: system, root, installs, where cuDNN "
	  "is found, driver and GPUs, and the verify table",
	  NULL, 0, 0, CLI_ROOT | CLI_ROOT_OPTIONAL, doctor_opts },
	{ "version", cmd_version, NULL,
	  "print cudnnctl's version (--json: also the exit codes and "
	  "verify stages)",
	  NULL, 0, 0, 0, NULL },
	{ NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL },
};
