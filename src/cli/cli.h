/* The command-line front end: the command table, shared state and output. */
#ifndef CUDNNCTL_CLI_H
#define CUDNNCTL_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "cudnnctl/cudnnctl.h"

struct cli_list {
	const char *v[32];
	int n;
};

/* What the command line said, parsed by the dispatcher from the command's
 * table entry: one field per option of any command (each command's table
 * names the ones it takes), the positional arguments, and what the
 * command's check made of them. */
struct cli_args {
	/* the options every command takes */
	const char *root;
	int json, quiet, help, verbose, ci;
	/* positional arguments */
	const char *pos[16];
	int npos;
	/* CLI_REST: the words after "--" (cudnnctl exec's command), NULL
	 * ended */
	char **rest;
	int nrest;
	/* command options */
	struct cli_list manifests;
	int allow_unknown, cuda, no_activate, system, no_verify, no_gpu, jobs;
	int connections;
	int available, force, require_gpu, full, build, persist, no_redact, python;
	const char *scope, *junit, *shell, *device, *wait, *env_version, *app;
	/* where releases come from (install VERSION, download, manifests,
	 * cache, list --available) */
	const char *mirror, *cache, *platform, *output;
	int offline, dry_run, install, run, last;
	/* mirror sync */
	struct cli_list versions, platforms, cudas;
	const char *from;
	int prune;
	/* scan, quarantine */
	struct cli_list deep;
	int time_limit, list;
	const char *restore;
	/* set by the command's check */
	unsigned act_flags;
	enum cctl_shell shell_kind;
};

enum cli_opt_kind { OPT_FLAG, OPT_STR, OPT_INT, OPT_LIST };

/* An option flag: given, the command needs no root (list --available). */
#define CLI_OPT_NO_ROOT 0x1

struct cli_option {
	const char *name;  /* "--cuda" */
	const char *alias; /* "-q", or NULL */
	enum cli_opt_kind kind;
	size_t field;      /* offsetof(struct cli_args, ...): int for a flag or
			      OPT_INT, const char * for OPT_STR, struct
			      cli_list for OPT_LIST */
	const char *value; /* what --help calls the value ("N"); NULL: flag */
	const char *help;  /* one line */
	const char *(*dflt)(void); /* the default, for --help; or NULL */
	unsigned flags;    /* CLI_OPT_* */
};

/* Command flags: how the dispatcher prepares the root and what it does
 * after the command. */
#define CLI_ROOT 0x01          /* opens the root (--root or the default) */
#define CLI_CREATE 0x02        /* may create it; a failed command removes
				  what was created (cctl_root_discard) */
#define CLI_LOCK 0x04          /* takes the root's lock */
#define CLI_ROOT_OPTIONAL 0x08 /* a root that does not exist is passed as
				  NULL (cli->root_error holds why) */
#define CLI_REST 0x20          /* "--" ends cudnnctl's arguments: the rest
				  is a command (a->rest) */
#define CLI_HISTORY 0x40       /* a change to the root: a line in
				  <root>/history.jsonl, whatever came of it */
#define CLI_VERIFY_AFTER 0x10  /* runs verify after a success (unless
				  --no-verify); the JSON result gets a
				  "verify" member */

struct cli;

struct cli_command {
	const char *name;
	/* Does the work on a root opened as flags say (NULL when none is
	 * needed or none exists, see CLI_ROOT_OPTIONAL); returns the exit
	 * status. */
	int (*run)(struct cli *cli, const struct cli_args *a,
		   struct cctl_root *root);
	/* Usage checks the table cannot express (values of options, options
	 * that exclude each other), before the root opens; NULL if none.
	 * Returns 0 or the exit status (cli_usage_error). */
	int (*check)(struct cli *cli, struct cli_args *a);
	const char *summary; /* one line */
	const char *args;    /* positional arguments for the usage: "VERSION" */
	int min_args, max_args;
	unsigned flags;      /* CLI_* */
	const struct cli_option *options; /* ends with name NULL; NULL: none */
};

/* The table (commands.c), ending with name NULL, and the options every
 * command takes, parsed by the dispatcher. */
extern const struct cli_command cli_commands[];
extern const struct cli_option cli_common_options[];

struct cli {
	struct cctl_ctx ctx;
	const struct cli_command *command; /* the command being run */
	const char *cmd;   /* its name, for messages */
	int json;
	int quiet;
	int progress;      /* draw a bar on stderr (a terminal only) */
	int escapes;       /* the terminal takes escape sequences (else the
			      bar is redrawn with \r and spaces) */
	int bar_len;       /* characters of the bar line on screen */
	int bar_phase;     /* phase of the bar on screen, -1 when none */
	double bar_last;   /* ms of the last redraw */
	double bar_start;
	uint64_t bar_first; /* bytes done when the phase began (a resumed
			       download starts past zero) */
	const char *root_arg;
	int root_error;    /* why the root is NULL (CLI_ROOT_OPTIONAL) */
	long wait_ms;      /* --wait: how long to wait for the root's lock */
	char doing[160];   /* "install 9.19": told to whoever waits for it */
	/* The members of the command's JSON result (cli_result); the
	 * dispatcher prints {"command":..., "ok":..., members} after it. */
	struct cctl_buf result;
	int has_result;
	int result_on_failure; /* a failure keeps the result, with the error
				  as its "error" member (mirror sync's report
				  of every file, for the cron job that failed) */
	struct cctl_buf error; /* that member, written by cli_fail */
	char *verify_version; /* what CLI_VERIFY_AFTER checks; NULL: active */
	char history_sha[65]; /* the archive install placed, for the history */
	int changed;          /* the command changed the root (a history line) */
	/* CI mode (--ci, or CI=true, GITHUB_ACTIONS, TF_BUILD set): progress
	 * as plain lines, the active install published to the pipeline
	 * (ci.c), profiles and the registry left alone unless --persist */
	int ci;
	double ci_last;    /* ms of the last progress line */
	int ci_status;     /* a failure to publish: its exit status */
};

/* verify's table and verdict, as the terminal shows them (cmd-verify.c) */
void cli_verify_table(struct cctl_buf *o, const struct cctl_verify *v, int status);

/* ci.c */
int cli_ci_detect(void);
/* Publishes the install `id` (now active) to the pipeline: GITHUB_ENV,
 * GITHUB_PATH, GITHUB_OUTPUT, or Azure Pipelines' logging commands.
 * Returns 0 or the exit status of a file it could not write. */
int cli_ci_publish(struct cli *cli, const struct cctl_root *root,
		   const char *id, int changed);
/* Appends verify's table to GITHUB_STEP_SUMMARY as Markdown. */
void cli_ci_summary(struct cli *cli, const struct cctl_verify *v, int status);

/* The usage line of a command (the table's), or the top-level one for
 * NULL; wrap: over several lines for a terminal. */
void cli_usage(struct cctl_buf *b, const struct cli_command *c, int wrap);
/* `cudnnctl --help` and `cudnnctl <command> --help`. */
void cli_help(FILE *f);
void cli_command_help(FILE *f, const struct cli_command *c);

/* Reports ctx's error for code (stderr, and a JSON object on stdout with
 * --json) and returns the exit status. */
int cli_fail(struct cli *cli, int code);
/* A usage error: message, usage line, exit status 2. */
int cli_usage_error(struct cli *cli, const char *fmt, ...) CCTL_FORMAT(2, 3);
/* The buffer a command appends its JSON result's members to ("key":
 * value, ...): the dispatcher wraps and prints them after a success. */
struct cctl_buf *cli_result(struct cli *cli);
/* Resolves and opens the root. */
int cli_open_root(struct cli *cli, struct cctl_root *r, int create, int lock);
/* exec --install: installs version (cuda 0: any) as `install VERSION
 * --no-activate` does, with the root locked only meanwhile; a note says
 * so on stderr.  0 or the error (on cli->ctx, not yet shown). */
/* No VERSION given (install, download): the one CUDNNCTL_VERSION or the
 * nearest .cudnn-version asks for goes into a->pos[0] (and its CUDA major
 * into a->cuda), with a note on stderr; neither is a usage error. */
int cli_pinned_arg(struct cli *cli, struct cli_args *a, const char *what);
/* verify --app PROGRAM (cmd-verify-app.c) */
int cli_verify_app(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cli_install_first(struct cli *cli, const struct cli_args *a,
		      const char *version, int cuda);
void cli_progress(void *ud, const struct cctl_progress *ev);
void cli_progress_done(struct cli *cli);
/* The one way a message reaches stderr: "cudnnctl: KIND: text" (kind
 * "error", "hint", "warning", "note"; NULL for none). */
void cli_say(const char *kind, const char *fmt, ...) CCTL_FORMAT(2, 3);
/* The core's notices (ctx.on_notice): the release chosen (not with
 * --quiet), manifests fetched. */
void cli_notice(void *ud, enum cctl_notice kind, const char *msg);
void cli_warning(void *ud, const char *msg);

/*
 * A small JSON writer over a buffer (git's json-writer.h is the model):
 * every member and element gets its comma from the writer (json_key and
 * json_item look at what came last), never by hand.
 *
 *   json_obj(b);            {
 *   json_kstr(b, "k", s);     "k":"s"
 *   json_karr(b, "v");        ,"v":[
 *   json_obj(b); ... json_end(b, '}');   {...}
 *   json_end(b, ']');         ]
 *   json_end(b, '}');       }
 */
/* Appends s as a JSON string literal. */
void json_str(struct cctl_buf *b, const char *s);
/* Appends "key": (after a comma when it needs one); a value follows. */
void json_key(struct cctl_buf *b, const char *key);
/* Appends "key": and the value. */
void json_kstr(struct cctl_buf *b, const char *key, const char *s);
void json_kint(struct cctl_buf *b, const char *key, long long v);
void json_kbool(struct cctl_buf *b, const char *key, int v);
/* "key": and v with `digits` digits after the point (%.Nf), or with
 * `digits` significant ones when general (%.Ng); null when !set. */
void json_knum(struct cctl_buf *b, const char *key, double v, int digits,
	       int general, int set);
/* Appends "key": and raw JSON (null when raw is NULL or empty). */
void json_kraw(struct cctl_buf *b, const char *key, const char *raw);
/* "key": and the opening brace or bracket of an object or an array. */
void json_kobj(struct cctl_buf *b, const char *key);
void json_karr(struct cctl_buf *b, const char *key);
/* An object as the next element of an array (or the whole document). */
void json_obj(struct cctl_buf *b);
/* A comma before the next element of an array when it needs one. */
void json_item(struct cctl_buf *b);
/* Closes an object ('}') or an array (']'). */
void json_end(struct cctl_buf *b, char close);
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

/* The commands (the table's run and check functions). */
int cmd_install(struct cli *cli, const struct cli_args *a,
		struct cctl_root *root);
int cmd_list(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_switch(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root);
int cmd_uninstall(struct cli *cli, const struct cli_args *a,
		  struct cctl_root *root);
int cmd_verify(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root);
int cmd_env(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_exec(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int check_exec(struct cli *cli, struct cli_args *a);
int check_install(struct cli *cli, struct cli_args *a);
int cmd_which(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_history(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_link_cuda(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_unlink_cuda(struct cli *cli, const struct cli_args *a,
		    struct cctl_root *root);
int cmd_pin(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
/* After the error of a version not installed: the pin that asked for it
 * (a file or CUDNNCTL_VERSION), as a note. */
void cli_pin_note(const struct cctl_pin *pin);
int cmd_deactivate(struct cli *cli, const struct cli_args *a,
		   struct cctl_root *root);
/* fetching.c: what install VERSION, download and list --available share.
 * The fetch options of the command line; the manifests (built in, fetched
 * before, --manifest); the release for VERSION, its CUDA major chosen and
 * the choice said on stderr (a manifests update first when nothing known
 * matches, unless --offline). */
void cli_fetch_opts(const struct cli_args *a, struct cctl_fetch_opts *o);
int cli_load_manifests(struct cli *cli, const struct cli_args *a,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m);
int cli_choose_release(struct cli *cli, const struct cli_args *a,
		       const struct cctl_fetch_opts *o, struct cctl_manifest *m,
		       const char *version, const char *platform,
		       const struct cctl_release **r);
/* The "download" member of a JSON result. */
void cli_fetch_json(struct cctl_buf *b, const struct cctl_release *r,
		    const char *url, const struct cctl_fetch_result *f);

int cmd_download(struct cli *cli, const struct cli_args *a,
		 struct cctl_root *root);
int cmd_manifests(struct cli *cli, const struct cli_args *a,
		  struct cctl_root *root);
int cmd_mirror(struct cli *cli, const struct cli_args *a,
	       struct cctl_root *root);
int check_mirror(struct cli *cli, struct cli_args *a);
int cmd_cache(struct cli *cli, const struct cli_args *a,
	      struct cctl_root *root);
int cmd_path(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_version(struct cli *cli, const struct cli_args *a,
		struct cctl_root *root);
int cmd_doctor(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
/* --scope user|machine (and --system) into a->act_flags. */
int check_scope(struct cli *cli, struct cli_args *a);
int check_verify(struct cli *cli, struct cli_args *a);
int check_env(struct cli *cli, struct cli_args *a);
int check_path(struct cli *cli, struct cli_args *a);
int check_quarantine(struct cli *cli, struct cli_args *a);
int cmd_scan(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
int cmd_quarantine(struct cli *cli, const struct cli_args *a, struct cctl_root *root);
/* After the active version changed from `from` (NULL: none): the running
 * programs that keep it loaded until they restart, as lines, or as the
 * JSON member still_loaded_by (switch, install). */
void cli_still_loaded(struct cli *cli, const struct cctl_root *root, const char *from);
/* The scan's copies as text (doctor's too) and as JSON members. */
void cli_scan_text(struct cctl_buf *b, const struct cctl_scan *s);
void cli_scan_json(struct cctl_buf *b, const struct cctl_scan *s);
int check_version_arg(struct cli *cli, struct cli_args *a);
int check_download(struct cli *cli, struct cli_args *a);
int check_manifests(struct cli *cli, struct cli_args *a);
int check_cache(struct cli *cli, struct cli_args *a);
const char *env_default_shell(void);
/* cudnnctl completions SHELL: prints the script; the exit status. */
int cli_completions(const char *shell);

#endif
