/* The command-line front end: shared state, options and output. */
#ifndef CUDNNCTL_CLI_H
#define CUDNNCTL_CLI_H

#include <stdio.h>

#include "cudnnctl/cudnnctl.h"

struct cli {
	struct cctl_ctx ctx;
	const char *cmd;   /* the command being run, for messages */
	int json;
	int quiet;
	int progress;      /* draw a bar on stderr (a terminal only) */
	int bar_phase;     /* phase of the bar on screen, -1 when none */
	double bar_last;   /* ms of the last redraw */
	double bar_start;
	const char *root_arg;
	const char *usage;
};

enum cli_opt_kind { OPT_FLAG, OPT_STR, OPT_INT, OPT_LIST };

struct cli_list {
	const char *v[32];
	int n;
};

struct cli_opt {
	const char *name; /* "--root" */
	enum cli_opt_kind kind;
	void *dest;       /* int *, const char **, struct cli_list * */
};

/* Parses argv[1..]: the options in opts, plus --root, --json, --quiet and
 * --help, which every command takes.  Positional arguments go to pos.
 * Returns 0, or an exit status (2 after a usage error, 0 after --help). */
int cli_parse(struct cli *cli, int argc, char **argv,
	      const struct cli_opt *opts, const char **pos, int max_pos,
	      int min_pos, int *npos, int *done);

/* Reports ctx's error for code (stderr, and a JSON object on stdout with
 * --json) and returns the exit status. */
int cli_fail(struct cli *cli, int code);
/* A usage error: message, usage line, exit status 2. */
int cli_usage_error(struct cli *cli, const char *fmt, ...) CCTL_FORMAT(2, 3);
/* Resolves and opens the root. */
int cli_open_root(struct cli *cli, struct cctl_root *r, int create, int lock);
void cli_progress(void *ud, const struct cctl_progress *ev);
void cli_progress_done(struct cli *cli);
void cli_warning(void *ud, const char *msg);

/* Appends s as a JSON string literal. */
void json_str(struct cctl_buf *b, const char *s);
/* Appends "key": and the value. */
void json_kstr(struct cctl_buf *b, const char *key, const char *s);
void json_kint(struct cctl_buf *b, const char *key, long long v);
void json_kbool(struct cctl_buf *b, const char *key, int v);
/* Writes b and a newline to stdout. */
void json_emit(struct cctl_buf *b);

/* Runs verify and prints its table or JSON (and JUnit when junit is
 * set); with json_out, the JSON object is appended there instead of
 * printed.  Returns the exit status. */
int cli_run_verify(struct cli *cli, struct cctl_root *root,
		   const struct cctl_verify_opts *o, const char *junit,
		   struct cctl_buf *json_out);
void cli_verify_json(struct cctl_buf *out, const struct cctl_verify *v,
		     int status);

/* The program: main() (src/platform/posix/main-posix.c) on POSIX,
 * wmain() (src/platform/win/main-win.c) on Windows after converting the
 * arguments to UTF-8. */
int cctl_cli_main(int argc, char **argv);

/* --scope user|machine (and --system) as activation flags. */
int cli_parse_scope(struct cli *cli, const char *scope, int system,
		    unsigned *flags);

int cmd_path(int argc, char **argv, struct cli *cli);
int cmd_verify(int argc, char **argv, struct cli *cli);
int cmd_install(int argc, char **argv, struct cli *cli);
int cmd_list(int argc, char **argv, struct cli *cli);
int cmd_switch(int argc, char **argv, struct cli *cli);
int cmd_uninstall(int argc, char **argv, struct cli *cli);
int cmd_env(int argc, char **argv, struct cli *cli);
int cmd_deactivate(int argc, char **argv, struct cli *cli);

#endif
