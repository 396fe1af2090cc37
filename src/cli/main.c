/* cudnnctl: the command table and what every command shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
	"usage: cudnnctl <command> [options]\n"
	"\n"
	"Installs NVIDIA cuDNN archives, verified against NVIDIA's manifests,\n"
	"into a short install root, and switches between installed versions.\n"
	"\n"
	"commands:\n"
	"  install ARCHIVE     verify, extract and activate a cuDNN zip or tar.xz\n"
	"  list                installed versions (--available: known releases)\n"
	"  switch VERSION      make another installed version active\n"
	"  uninstall VERSION   remove an installed version\n"
	"  verify [VERSION]    check that a new process finds, loads and can run\n"
	"                      the active cuDNN: 8 timed stages, ending in one\n"
	"                      convolution on the GPU\n"
	"  env                 print commands that apply the active version to\n"
	"                      this shell: eval \"$(cudnnctl env)\"\n"
	"  deactivate          undo the shell set-up; keep the versions\n"
	"  path restore        Windows: put back the PATH saved before cudnnctl\n"
	"                      first changed it\n"
	"  version             print cudnnctl's version\n"
	"\n"
	"options every command takes:\n"
#ifdef _WIN32
	"  --root DIR          install root (default: %CUDNNCTL_ROOT%, else\n"
	"                      %SystemDrive%\\cudnn)\n"
#else
	"  --root DIR          install root (default: $CUDNNCTL_ROOT, /opt/cudnn\n"
	"                      as root, else ~/.local/share/cudnn)\n"
#endif
	"  --json              results as JSON on stdout\n"
	"  --quiet             no progress bar\n"
	"  --help              usage of the command\n"
	"\n"
	"Exit codes are listed in docs/exit-codes.md.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli *cli);
} commands[] = {
	{ "install", cmd_install },   { "list", cmd_list },
	{ "switch", cmd_switch },     { "uninstall", cmd_uninstall },
	{ "env", cmd_env },           { "deactivate", cmd_deactivate },
	{ "verify", cmd_verify },     { "path", cmd_path },
};

/* cudnnctl version [--json]: with --json also the exit codes and the
 * verify stages, so that scripts and the tests need no copies of them. */
static int print_version(int json)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	if (!json) {
		printf("cudnnctl %s\n", CCTL_VERSION);
		return 0;
	}
	cctl_buf_addch(&b, '{');
	json_kstr(&b, "command", "version");
	json_kbool(&b, "ok", 1);
	json_kstr(&b, "version", CCTL_VERSION);
	json_kstr(&b, "platform", cctl_host_platform());
	cctl_buf_adds(&b, ",\"exit_codes\":{");
	for (int c = CCTL_ERROR_FIRST; c < CCTL_ERROR_END; c++)
		json_kint(&b, cctl_error_name(c) + 1, cctl_exit_status(c));
	cctl_buf_adds(&b, "},\"verify_stages\":[");
	for (int i = 0; i < CCTL_STAGE_COUNT; i++) {
		cctl_buf_adds(&b, i ? ",{" : "{");
		json_kstr(&b, "name", cctl_stage_name((enum cctl_stage)i));
		json_kint(&b, "exit_code",
			  cctl_exit_status(cctl_stage_code((enum cctl_stage)i)));
		json_kbool(&b, "needs_gpu", cctl_stage_needs_gpu((enum cctl_stage)i));
		cctl_buf_addch(&b, '}');
	}
	cctl_buf_adds(&b, "]}");
	json_emit(&b);
	cctl_buf_release(&b);
	return 0;
}

int cctl_cli_main(int argc, char **argv)
{
	struct cli cli;
	int status = -1;

	cctl_process_init();
	memset(&cli, 0, sizeof(cli));
	cctl_ctx_init(&cli.ctx);
	cli.ctx.on_progress = cli_progress;
	cli.ctx.on_warning = cli_warning;
	cli.ctx.ud = &cli;
	cli.bar_phase = -1;

	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		status = 0;
	} else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		status = print_version(argc > 2 && !strcmp(argv[2], "--json"));
	}
	for (size_t i = 0; status < 0 && i < sizeof(commands) / sizeof(*commands);
	     i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		cli.cmd = commands[i].name;
		cli.progress = cctl_isatty(2);
		status = commands[i].fn(argc - 1, argv + 1, &cli);
		cli_progress_done(&cli);
	}
	if (status < 0) {
		fprintf(stderr,
			"cudnnctl: error: unknown command '%s'\n"
			"cudnnctl: hint: run 'cudnnctl --help' for the list\n",
			argv[1]);
		return 2;
	}
	/* results reach stdout whole or the command fails (as git does) */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "cudnnctl: error: cannot write the output: %s\n",
			strerror(errno));
		status = 3;
	}
	fflush(stderr);
	/* Everything cudnnctl writes is written and closed by now.  Leaving
	 * without running the exit handlers skips the CUDA driver's and
	 * cuDNN's teardown: on an H200 the median verify process went from
	 * 0.427 s to 0.409 s (docs/benchmarks.md).  The operating system
	 * reclaims what they would have freed. */
	cctl_process_done();
	_Exit(status);
}
