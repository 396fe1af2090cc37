/* cudnnctl: the dispatcher.  Finds the command in the table (commands.c),
 * parses its options and the common ones, applies --json and --quiet,
 * opens the root as the command's flags say, runs it, runs verify after
 * it where the table says so, and prints its JSON result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define WIDTH 79    /* help text wraps before this column */
#define OPT_COL 24  /* where an option's description starts */
#define CMD_COL 24  /* where a command's summary starts */

static const char intro[] =
	"Installs NVIDIA cuDNN archives, verified against NVIDIA's manifests,\n"
	"into a short install root, and switches between installed versions.\n";

/* ------------------------------------------------------------------ help */

/* Appends text word by word, starting at column *col, going on at column
 * indent on a new line where a word would pass WIDTH (wrap = 0: never). */
static void add_words(struct cctl_buf *b, const char *text, size_t *col,
		      size_t indent, int wrap)
{
	while (*text) {
		size_t n = strcspn(text, " ");
		int first = !b->len || b->buf[b->len - 1] == ' ' ||
			    b->buf[b->len - 1] == '\n';
		if (!first && wrap && *col + 1 + n > WIDTH) {
			cctl_buf_addf(b, "\n%*s", (int)indent, "");
			*col = indent;
		} else if (!first) {
			cctl_buf_addch(b, ' ');
			(*col)++;
		}
		cctl_buf_add(b, text, n);
		*col += n;
		text += n;
		text += strspn(text, " ");
	}
}

/* Pads the line begun at start to column `at` (a new line when less than
 * two spaces would be left); returns the column. */
static size_t pad_to(struct cctl_buf *b, size_t start, size_t at)
{
	size_t col = b->len - start;
	if (col + 2 > at) {
		cctl_buf_addch(b, '\n');
		col = 0;
	}
	cctl_buf_addf(b, "%*s", (int)(at - col), "");
	return at;
}

static void usage_option(struct cctl_buf *b, const struct cli_option *o,
			 size_t *col, size_t indent, int wrap)
{
	struct cctl_buf word = CCTL_BUF_INIT;
	cctl_buf_addf(&word, "[%s", o->name);
	if (o->value)
		cctl_buf_addf(&word, "\x01%s", o->value);
	cctl_buf_adds(&word, o->kind == OPT_LIST ? "]..." : "]");
	add_words(b, word.buf, col, indent, wrap);
	cctl_buf_release(&word);
}

void cli_usage(struct cctl_buf *b, const struct cli_command *c, int wrap)
{
	/* "usage: " comes before it */
	size_t start = b->len, col = 7, indent;
	cctl_buf_adds(b, "cudnnctl ");
	if (!c) {
		cctl_buf_adds(b, "<command> [options]");
		return;
	}
	cctl_buf_adds(b, c->name);
	col += b->len - start;
	indent = wrap ? col + 1 : 0;
	if (c->args)
		add_words(b, c->args, &col, indent, wrap);
	for (const struct cli_option *o = c->options; o && o->name; o++)
		usage_option(b, o, &col, indent, wrap);
	for (const struct cli_option *o = cli_common_options; o->name; o++)
		if (o->field != offsetof(struct cli_args, help))
			usage_option(b, o, &col, indent, wrap);
	/* a value stays with its option ("[--cuda N]"): joined by \x01
	 * while wrapping */
	for (size_t i = start; i < b->len; i++)
		if (b->buf[i] == '\x01')
			b->buf[i] = ' ';
}

/* "  -q, --quiet     no progress bar" */
static void help_option(struct cctl_buf *b, const struct cli_option *o)
{
	size_t start = b->len, col;
	cctl_buf_adds(b, "  ");
	if (o->alias)
		cctl_buf_addf(b, "%s, ", o->alias);
	cctl_buf_adds(b, o->name);
	if (o->value)
		cctl_buf_addf(b, " %s", o->value);
	col = pad_to(b, start, OPT_COL);
	add_words(b, o->help, &col, OPT_COL, 1);
	if (o->dflt) {
		char *d = cctl_xstrfmt("(default: %s)", o->dflt());
		add_words(b, d, &col, OPT_COL, 1);
		free(d);
	}
	cctl_buf_addch(b, '\n');
}

static void help_common(struct cctl_buf *b)
{
	cctl_buf_adds(b, "\noptions every command takes:\n");
	for (const struct cli_option *o = cli_common_options; o->name; o++)
		help_option(b, o);
}

void cli_help(FILE *f)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char *apply = cctl_env_command(NULL);
	size_t col;
	cctl_buf_adds(&b, "usage: ");
	cli_usage(&b, NULL, 1);
	cctl_buf_adds(&b, "\n       cudnnctl <command> --help\n\n");
	cctl_buf_adds(&b, intro);
	cctl_buf_adds(&b, "\ncommands:\n");
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		size_t start = b.len;
		cctl_buf_addf(&b, "  %s", c->name);
		if (c->args)
			cctl_buf_addf(&b, " %s", c->args);
		col = pad_to(&b, start, CMD_COL);
		add_words(&b, c->summary, &col, CMD_COL, 1);
		cctl_buf_addch(&b, '\n');
	}
	help_common(&b);
	cctl_buf_addf(&b,
		      "\nApply the active version to this shell: %s\n"
		      "Shell completion: cudnnctl completions bash|zsh|powershell\n"
		      "Exit codes are listed in docs/exit-codes.md; the manual is "
		      "%s.\n",
		      apply,
		      cctl_platform_host()->windows
			      ? "docs/cudnnctl.md (man cudnnctl elsewhere)"
			      : "man cudnnctl (docs/cudnnctl.1)");
	fwrite(b.buf, 1, b.len, f);
	cctl_buf_release(&b);
	free(apply);
}

void cli_command_help(FILE *f, const struct cli_command *c)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	size_t col = 0;
	cctl_buf_adds(&b, "usage: ");
	cli_usage(&b, c, 1);
	cctl_buf_adds(&b, "\n\n");
	add_words(&b, c->summary, &col, 0, 1);
	cctl_buf_addch(&b, '\n');
	if (c->options && c->options->name) {
		cctl_buf_adds(&b, "\noptions:\n");
		for (const struct cli_option *o = c->options; o->name; o++)
			help_option(&b, o);
	}
	help_common(&b);
	fwrite(b.buf, 1, b.len, f);
	cctl_buf_release(&b);
}

/* --------------------------------------------------------------- parsing */

static const struct cli_option *find_option(const struct cli_command *c,
					    const char *arg, size_t n)
{
	for (const struct cli_option *o = c->options; o && o->name; o++)
		if ((strlen(o->name) == n && !strncmp(o->name, arg, n)) ||
		    (o->alias && strlen(o->alias) == n && !strncmp(o->alias, arg, n)))
			return o;
	for (const struct cli_option *o = cli_common_options; o->name; o++)
		if ((strlen(o->name) == n && !strncmp(o->name, arg, n)) ||
		    (o->alias && strlen(o->alias) == n &&
		     !strncmp(o->alias, arg, n)))
			return o;
	return NULL;
}

/* --json anywhere before "--": a usage error is JSON too (exec's command
 * may take a --json of its own). */
static int wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return 1;
	return 0;
}

/* argv[1..] into a; returns 0 or the exit status of a usage error.  Stops
 * at --help. */
static int parse(struct cli *cli, const struct cli_command *c, int argc,
		 char **argv, struct cli_args *a)
{
	int only_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		const struct cli_option *o;
		char *field;
		size_t n;
		if (only_pos || arg[0] != '-' || !arg[1]) {
			if (a->npos >= c->max_args)
				return cli_usage_error(cli, "unexpected argument "
							    "'%s' for '%s'",
						       arg, c->name);
			a->pos[a->npos++] = arg;
			continue;
		}
		if (!strcmp(arg, "--")) {
			if (c->flags & CLI_REST) {
				a->rest = argv + i + 1;
				a->nrest = argc - i - 1;
				break;
			}
			only_pos = 1;
			continue;
		}
		eq = strchr(arg, '=');
		n = eq ? (size_t)(eq - arg) : strlen(arg);
		if (!(o = find_option(c, arg, n)))
			return cli_usage_error(cli, "unknown option '%.*s' for '%s'",
					       (int)n, arg, c->name);
		field = (char *)a + o->field;
		if (o->kind == OPT_FLAG) {
			if (eq)
				return cli_usage_error(cli, "option '%s' takes no "
							    "value",
						       o->name);
			*(int *)field = 1;
			if (o->field == offsetof(struct cli_args, help))
				return 0;
			continue;
		}
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return cli_usage_error(cli, "option '%s' needs a value",
					       o->name);
		if (o->kind == OPT_STR) {
			*(const char **)field = val;
		} else if (o->kind == OPT_INT) {
			char *end;
			long v = strtol(val, &end, 10);
			if (*end || !*val || v <= 0 || v > 1000)
				return cli_usage_error(cli, "option '%s' needs a "
							    "positive number, "
							    "not '%s'",
						       o->name, val);
			*(int *)field = (int)v;
		} else {
			struct cli_list *l = (struct cli_list *)field;
			if (l->n >= (int)(sizeof(l->v) / sizeof(l->v[0])))
				return cli_usage_error(cli, "too many '%s' options",
						       o->name);
			l->v[l->n++] = val;
		}
	}
	if (a->npos < c->min_args)
		return cli_usage_error(cli, "'%s' needs %s", c->name,
				       c->min_args == 1 ? "an argument"
							: "more arguments");
	return 0;
}

/* ------------------------------------------------------------ dispatcher */

/* Whether the command opens the root this time: not with an option that
 * makes it unneeded (list --available). */
static int needs_root(const struct cli_command *c, const struct cli_args *a)
{
	if (!(c->flags & CLI_ROOT))
		return 0;
	for (const struct cli_option *o = c->options; o && o->name; o++)
		if ((o->flags & CLI_OPT_NO_ROOT) && o->kind == OPT_FLAG &&
		    *(const int *)((const char *)a + o->field))
			return 0;
	return 1;
}

/* CLI_VERIFY_AFTER: verify (unless --no-verify) what the command left
 * active or named in cli->verify_version; its JSON becomes the "verify"
 * member of the command's result.  Returns verify's exit status. */
static int verify_after(struct cli *cli, const struct cli_args *a,
			struct cctl_root *root, struct cctl_buf *json)
{
	struct cctl_verify_opts vo;
	if (a->no_verify)
		return 0;
	memset(&vo, 0, sizeof(vo));
	vo.version = cli->verify_version;
	vo.no_gpu = a->no_gpu;
	if (!cli->json)
		printf("\n");
	return cli_run_verify(cli, root, &vo, NULL, cli->json ? json : NULL);
}

/* --wait SECONDS (default 300), and what this command tells whoever
 * waits for the root: its name and its argument ("install 9.19"; an
 * archive by its file name). */
static int wait_option(struct cli *cli, const struct cli_args *a)
{
	const char *arg = a->npos ? a->pos[0] : "";
	const char *base = arg;
	long secs = 300;
	for (const char *p = arg; *p; p++) /* only said: either separator */
		if (*p == '/' || *p == '\\')
			base = p + 1;
	if (a->wait) {
		char *end;
		secs = strtol(a->wait, &end, 10);
		if (*end || !*a->wait || a->wait[0] == '-' || secs > 86400)
			return cli_usage_error(cli, "option '--wait' needs a number "
						    "of seconds from 0 to 86400, "
						    "not '%s'",
					       a->wait);
	}
	cli->wait_ms = secs * 1000;
	snprintf(cli->doing, sizeof(cli->doing), "%s%s%.120s", cli->cmd,
		 *base ? " " : "", base);
	return 0;
}

/* One line in <root>/history.jsonl for a command that changes the root:
 * the command line, the active version before and after, the archive's
 * SHA-256 (install), the exit status.  A line that cannot be written is
 * a warning: the change itself is done. */
static void record_history(struct cli *cli, const struct cli_command *c,
			   const struct cctl_root *root, int argc, char **argv,
			   const char *from, int status)
{
	struct cctl_history_entry e;
	struct cctl_buf args = CCTL_BUF_INIT;
	struct cctl_ctx ctx;
	char *to = NULL;
	memset(&e, 0, sizeof(e));
	cctl_ctx_init(&ctx);
	cctl_buf_adds(&args, "cudnnctl");
	for (int i = 0; i < argc; i++) {
		int quote = !argv[i][0] || strpbrk(argv[i], " \t\"'") != NULL;
		cctl_buf_addf(&args, quote ? " '%s'" : " %s", argv[i]);
	}
	if (cctl_store_active(NULL, root, &to))
		to = NULL;
	/* a refusal, an error before any change or a command with nothing
	 * to do changed nothing: no line (the root stays as it was, byte for
	 * byte) */
	if (!cli->changed && !((from == NULL) != (to == NULL) ||
			       (from && to && strcmp(from, to)))) {
		free(to);
		cctl_buf_release(&args);
		return;
	}
	e.command = (char *)c->name;
	e.args = args.buf;
	e.from = (char *)from;
	e.to = to;
	e.sha256 = cli->history_sha;
	e.ok = status == 0;
	e.exit_status = status;
	if (cctl_history_append(&ctx, root, &e))
		cli_say("warning", "the change is done, but %s", ctx.msg);
	free(to);
	cctl_buf_release(&args);
}

static int run_command(struct cli *cli, const struct cli_command *c, int argc,
		       char **argv)
{
	char *history_from = NULL;
	struct cli_args a;
	struct cctl_root root = { 0 };
	struct cctl_buf verify_json = CCTL_BUF_INIT;
	int status, ret, have_root = 0, failed = 0;

	memset(&a, 0, sizeof(a));
	cli->command = c;
	cli->cmd = c->name;
	cli->json = wants_json(argc, argv);
	if ((status = parse(cli, c, argc, argv, &a)))
		return status;
	if (a.help) {
		cli_command_help(stdout, c);
		return 0;
	}
	cli->json = a.json;
	cli->quiet = a.quiet;
	cli->ctx.verbose = a.verbose;
	cli->root_arg = a.root;
	cli->ci = a.ci || cli_ci_detect();
	/* the bar: on a terminal, and for people; in CI, plain lines */
	cli->progress = !a.quiet && !a.json && (cli->ci || cctl_isatty(2));
	cli->escapes = cli->progress && !cli->ci && cctl_terminal(2) == 2;
	if (c->check && (status = c->check(cli, &a)))
		return status;
	if ((status = wait_option(cli, &a)))
		return status;

	if (needs_root(c, &a)) {
		ret = cli_open_root(cli, &root, !!(c->flags & CLI_CREATE),
				    !!(c->flags & CLI_LOCK));
		if (ret == CCTL_ENOTFOUND && (c->flags & CLI_ROOT_OPTIONAL)) {
			cli->root_error = ret;
		} else if (ret) {
			status = cli_fail(cli, ret);
			failed = 1;
			goto out;
		} else {
			have_root = 1;
		}
	}
	if (have_root && (c->flags & CLI_HISTORY) &&
	    cctl_store_active(NULL, &root, &history_from))
		history_from = NULL;
	status = c->run(cli, &a, have_root ? &root : NULL);
	failed = status != 0;
	if (have_root && (c->flags & CLI_HISTORY))
		record_history(cli, c, &root, argc, argv, history_from, status);
	cli_progress_done(cli);
	if (!failed && (c->flags & CLI_VERIFY_AFTER))
		status = verify_after(cli, &a, &root, &verify_json);
	if (!status && cli->ci_status)
		status = cli->ci_status; /* done, but not handed to the pipeline */
	if ((!failed || cli->error.len) && cli->json && cli->has_result) {
		struct cctl_buf b = CCTL_BUF_INIT;
		json_obj(&b);
		json_kstr(&b, "command", c->name);
		json_kbool(&b, "ok", status == 0);
		if (cli->result.len) {
			/* the command's own members */
			json_item(&b);
			cctl_buf_add(&b, cli->result.buf, cli->result.len);
		}
		if (c->flags & CLI_VERIFY_AFTER)
			json_kraw(&b, "verify", verify_json.buf);
		if (cli->error.len)
			json_kraw(&b, "error", cli->error.buf);
		json_end(&b, '}');
		json_emit(&b);
		cctl_buf_release(&b);
	}
out:
	/* a failed command leaves the root as it found it */
	if (failed && (c->flags & CLI_CREATE))
		cctl_root_discard(&root);
	else
		cctl_root_close(&root);
	cctl_buf_release(&verify_json);
	cctl_buf_release(&cli->result);
	cctl_buf_release(&cli->error);
	free(history_from);
	free(cli->verify_version);
	cli->verify_version = NULL;
	return status;
}

static const struct cli_command *find_command(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* Edits (insert, delete, replace, swap two neighbours) between a and b,
 * stopping past 3. */
static int distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	int d[32][32];
	if (n > 30 || m > 30)
		return 99;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int c = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[n][m];
}

static int unknown_command(const char *name)
{
	const struct cli_command *best = NULL;
	int best_d = 3; /* "did you mean" only within two edits */
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		int d = distance(name, c->name);
		if (d < best_d) {
			best_d = d;
			best = c;
		}
	}
	cli_say("error", "unknown command '%s'", name);
	if (best)
		cli_say("hint", "did you mean 'cudnnctl %s'? (cudnnctl --help lists "
				"them all)",
			best->name);
	else
		cli_say("hint", "run 'cudnnctl --help' for the list");
	return cctl_exit_status(CCTL_EUSAGE);
}

int cctl_cli_main(int argc, char **argv)
{
	struct cli cli;
	const struct cli_command *c;
	int status;

	cctl_process_init();
	memset(&cli, 0, sizeof(cli));
	cctl_ctx_init(&cli.ctx);
	cli.ctx.on_progress = cli_progress;
	cli.ctx.on_warning = cli_warning;
	cli.ctx.on_notice = cli_notice;
	cli.ctx.ud = &cli;
	cli.bar_phase = -1;
	cctl_buf_init(&cli.result);

	if (argc < 2) {
		cli_help(stderr);
		return cctl_exit_status(CCTL_EUSAGE);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		/* cudnnctl help COMMAND: that command's help */
		status = 0;
		if (argc < 3)
			cli_help(stdout);
		else if ((c = find_command(argv[2])))
			cli_command_help(stdout, c);
		else
			status = unknown_command(argv[2]);
	} else if (!strcmp(argv[1], "completions")) {
		/* made from the table, outside it: cudnnctl completions SHELL */
		if (argc != 3 || argv[2][0] == '-') {
			fprintf(stderr, "usage: cudnnctl completions bash|zsh|powershell\n");
			status = argc == 3 && (!strcmp(argv[2], "--help") ||
					       !strcmp(argv[2], "-h"))
					 ? 0
					 : 2;
		} else {
			status = cli_completions(argv[2]);
		}
	} else if ((c = find_command(strcmp(argv[1], "--version") ? argv[1]
								   : "version"))) {
		status = run_command(&cli, c, argc - 1, argv + 1);
		cli_progress_done(&cli);
	} else {
		return unknown_command(argv[1]);
	}
	/* results reach stdout whole or the command fails (as git does) */
	if (fflush(stdout) || ferror(stdout)) {
		cli_say("error", "cannot write the output: %s", strerror(errno));
		status = cctl_exit_status(CCTL_EIO);
	}
	fflush(stderr);
	/* Everything cudnnctl writes is written and closed by now.  Leaving
	 * without running the exit handlers skips the CUDA driver's and
	 * cuDNN's teardown: on an H200 the median verify process went from
	 * 0.427 s to 0.409 s (docs/benchmarks.md).  The operating system
	 * reclaims what they would have freed. */
	cctl_process_done();
#ifdef CCTL_LEAK_CHECK
	/* a sanitizer build: the exit handlers run, and LeakSanitizer with
	 * them */
	exit(status);
#else
	cctl_process_exit(status);
#endif
}
