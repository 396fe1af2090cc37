/*
 * verify --build: compiles, links and runs a small C program against the
 * install the way a user's build would, and compares the CUDNN_VERSION
 * the compiler saw with what cudnnGetVersion() of the loaded library says.
 *
 * The compiler: Linux $CC (else cc); Windows cl.exe where a Visual Studio
 * developer prompt is active (VCINSTALLDIR), else gcc on PATH; none is a
 * skip with the reason.  The user's CPPFLAGS, CFLAGS and LDFLAGS go first
 * (as make passes them), then the install's include and library folders:
 * a stale cudnn_version.h earlier on the include path is what the program
 * is then built with, and the finding names it.  The program runs with
 * the variables `exec` gives the version.  The work folder (program,
 * compiler output) is removed when the stage passes and kept, named in the
 * finding, when it does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "verify-internal.h"

#define TIMEOUT_MS 120000u

static const char probe_c[] =
	"/* written by cudnnctl verify --build */\n"
	"#include <stdio.h>\n"
	"#include <stddef.h>\n"
	"#include <cudnn_version.h>\n"
	"#if defined(_WIN32) && !defined(_WIN64)\n"
	"#define CCTL_API __stdcall\n"
	"#else\n"
	"#define CCTL_API\n"
	"#endif\n"
	"size_t CCTL_API cudnnGetVersion(void);\n"
	"int main(void)\n"
	"{\n"
	"\tprintf(\"header %d\\nlibrary %lu\\n\", (int)CUDNN_VERSION,\n"
	"\t       (unsigned long)cudnnGetVersion());\n"
	"\treturn 0;\n"
	"}\n";

struct argv {
	char **v;
	size_t n;
};

static void arg(struct argv *a, char *s)
{
	a->v = cctl_xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* The words of a variable such as CFLAGS ("-O2 -I/x"): split at blanks,
 * as make's $(CFLAGS) is; no quoting. */
static void words(struct argv *a, const char *var)
{
	const char *s = cctl_os_getenv(var);
	while (s && *s) {
		size_t n;
		while (*s == ' ' || *s == '\t')
			s++;
		n = strcspn(s, " \t");
		if (n)
			arg(a, cctl_xstrfmt("%.*s", (int)n, s));
		s += n;
	}
}

static void argv_free(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

struct build {
	struct run *r;
	char *work, *src, *exe, *deps, *log;
	char *inc, *lib;   /* the install's include and library folders */
	const char *cc;    /* its name, for messages */
	int msvc;          /* cl.exe: /showIncludes, /link */
	struct cctl_buf out, err;
};

static void skip(struct run *r, const char *why)
{
	struct cctl_stage_result *s = &r->stages[r->current];
	s->status = CCTL_SKIP;
	free(s->reason);
	s->reason = cctl_xstrdup(why);
	cctl__finding(r, "not run");
}

/* Runs argv, its output appended to the log; 0 and *status, or nonzero
 * when it could not be started at all (pipes, processes). */
static int run_logged(struct build *b, struct argv *a, int *status)
{
	struct cctl_buf log = CCTL_BUF_INIT;
	int ret;
	cctl_buf_reset(&b->out);
	cctl_buf_reset(&b->err);
	ret = cctl_os_run_capture(b->r->ctx, (const char *const *)a->v, TIMEOUT_MS,
				  &b->out, &b->err, status);
	cctl_buf_adds(&log, "$");
	for (size_t i = 0; i < a->n; i++)
		cctl_buf_addf(&log, " %s", a->v[i]);
	cctl_buf_addf(&log, "\n%s%s(exit status %d)\n\n", b->out.buf, b->err.buf,
		      *status);
	cctl_os_append_file(NULL, b->log, log.buf, log.len);
	cctl_buf_release(&log);
	return ret;
}

/* The compiler's command for the probe: gcc style or cl's. */
static void compile_args(struct build *b, struct argv *a, const char *cc)
{
	if (b->msvc) {
		arg(a, cctl_xstrdup(cc));
		arg(a, cctl_xstrdup("/nologo"));
		arg(a, cctl_xstrdup("/showIncludes"));
		words(a, "CFLAGS"); /* (cl reads CL itself) */
		arg(a, cctl_xstrfmt("/I%s", b->inc));
		arg(a, cctl_xstrfmt("/Fe%s", b->exe));
		arg(a, cctl_xstrfmt("/Fo%s%c", b->work, CCTL_OS_DIR_SEP));
		arg(a, cctl_xstrdup(b->src));
		arg(a, cctl_xstrdup("/link"));
		words(a, "LDFLAGS");
		arg(a, cctl_xstrfmt("/LIBPATH:%s", b->lib));
		arg(a, cctl_xstrdup("cudnn.lib"));
	} else {
		words(a, "CC");
		if (!a->n)
			arg(a, cctl_xstrdup(cc));
		words(a, "CPPFLAGS");
		words(a, "CFLAGS");
		arg(a, cctl_xstrfmt("-I%s", b->inc));
		arg(a, cctl_xstrdup("-MD"));
		arg(a, cctl_xstrdup("-MF"));
		arg(a, cctl_xstrdup(b->deps));
		arg(a, cctl_xstrdup("-o"));
		arg(a, cctl_xstrdup(b->exe));
		arg(a, cctl_xstrdup(b->src));
		words(a, "LDFLAGS");
		arg(a, cctl_xstrfmt("-L%s", b->lib));
		arg(a, cctl_xstrdup("-lcudnn"));
	}
}

/* The cudnn_version.h the compiler read: from gcc's dependency file or
 * cl's /showIncludes lines ("Note: including file:   C:\...\x.h", the
 * words localised); NULL when it says none. */
static char *header_used(struct build *b)
{
	struct cctl_buf text = CCTL_BUF_INIT;
	char *found = NULL, *p;
	if (b->msvc)
		cctl_buf_adds(&text, b->out.buf);
	else if (cctl_os_read_file(NULL, b->deps, &text))
		return NULL;
	for (p = text.buf; (p = strstr(p, "cudnn_version.h")); p++) {
		const char *end = p + strlen("cudnn_version.h"), *start = p;
		if (*end && *end != ' ' && *end != '\n' && *end != '\r' && *end != '\\')
			continue;
		if (b->msvc) { /* the line, after its last ": " */
			while (start > text.buf && start[-1] != '\n')
				start--;
			for (const char *q = start; q < p; q++)
				if (q[0] == ':' && q[1] == ' ')
					start = q + 1;
			while (*start == ' ')
				start++;
		} else { /* a word of the make rule */
			while (start > text.buf && start[-1] != ' ' && start[-1] != '\n')
				start--;
		}
		found = cctl_xstrfmt("%.*s", (int)(end - start), start);
		break;
	}
	cctl_buf_release(&text);
	return found;
}

/* Which compiler, by the platform's rule; NULL (and why) when none. */
static const char *choose(struct build *b, char *why, size_t n)
{
	struct argv a = { 0 };
	int status = 127;
	const char *cc;
	if (!b->r->plat->windows) {
		cc = cctl_os_getenv("CC") ? cctl_os_getenv("CC") : "cc";
		words(&a, "CC");
		if (!a.n)
			arg(&a, cctl_xstrdup(cc));
		arg(&a, cctl_xstrdup("--version"));
		cctl_os_run_capture(NULL, (const char *const *)a.v, TIMEOUT_MS,
				    NULL, NULL, &status);
		argv_free(&a);
		if (status == 127) {
			snprintf(why, n, "no C compiler: '%s' was not found (set CC, "
					 "or install gcc)", cc);
			return NULL;
		}
		return cc;
	}
	if (cctl_os_getenv("VCINSTALLDIR")) {
		const char *cl[] = { "cl.exe", NULL };
		cctl_os_run_capture(NULL, cl, TIMEOUT_MS, NULL, NULL, &status);
		if (status != 127) {
			b->msvc = 1;
			return "cl.exe";
		}
	}
	{
		const char *gcc[] = { "gcc.exe", "--version", NULL };
		cctl_os_run_capture(NULL, gcc, TIMEOUT_MS, NULL, NULL, &status);
		if (status != 127)
			return "gcc.exe";
	}
	snprintf(why, n, "no C compiler: no Visual Studio developer prompt "
			 "(VCINSTALLDIR, cl.exe) and no gcc.exe on PATH");
	return NULL;
}

/* h: the header the compiler read, or NULL */
static void judge(struct build *b, int status, const char *h)
{
	struct run *r = b->r;
	long header = -1, library = -1;
	const char *p;

	if ((p = strstr(b->out.buf, "header ")))
		header = strtol(p + 7, NULL, 10);
	if ((p = strstr(b->out.buf, "library ")))
		library = strtol(p + 8, NULL, 10);
	if (status || header < 0 || library < 0) {
		cctl__fail(r, "see the log; the load stage says whether the "
			      "library itself loads",
			   "the program built with %s did not run (exit status "
			   "%d); its output is in %s",
			   b->cc, status, b->log);
	} else if (header != library) {
		char *fix = cctl_xstrfmt(
			"remove or rename the stale %s, or put %s before its "
			"folder on the include path (CFLAGS, CPATH, INCLUDE)",
			h ? h : "cudnn_version.h", b->inc);
		cctl__fail(r, fix,
			   "the compiler saw CUDNN_VERSION %ld in %s, the loaded "
			   "library is %ld: a build compiles against other "
			   "headers than the library it loads",
			   header, h ? h : "(not said)", library);
		free(fix);
	} else {
		cctl__finding(r, "%s: compiled against %s, linked and ran: "
				 "CUDNN_VERSION %ld, cudnnGetVersion() %ld",
			      b->cc, h ? h : b->inc, header, library);
	}
	if (r->stages[r->current].status == CCTL_FAIL)
		cctl__finding(r, "%s; output in %s", b->cc, b->log);
}

/* The exec variables of the version, set in this process for the
 * program's run, and put back after. */
struct saved {
	struct cctl_env_var vars[CCTL_ENV_MAX];
	char *old[CCTL_ENV_MAX];
	size_t n;
};

static int env_apply(struct run *r, struct saved *s)
{
	char *id = NULL;
	memset(s, 0, sizeof(*s));
	if (cctl_exec_env(NULL, r->root, r->rec.id, r->rec.cuda, s->vars, &s->n, &id))
		return -1;
	free(id);
	for (size_t i = 0; i < s->n; i++) {
		const char *v = cctl_os_getenv(s->vars[i].name);
		s->old[i] = v ? cctl_xstrdup(v) : NULL;
		cctl_os_setenv(s->vars[i].name, s->vars[i].value);
	}
	return 0;
}

static void env_restore(struct saved *s)
{
	for (size_t i = 0; i < s->n; i++) {
		cctl_os_setenv(s->vars[i].name, s->old[i]);
		free(s->old[i]);
	}
	cctl_env_vars_release(s->vars, s->n);
}

static void build_run(struct build *b)
{
	struct run *r = b->r;
	struct argv a = { 0 };
	struct saved env;
	int status = 0;

	if (cctl_os_write_file_atomic(r->ctx, b->src, probe_c, strlen(probe_c))) {
		cctl__fail(r, "make the temporary folder writable (TMPDIR, TEMP)",
			   "%s", cctl__msg(r->ctx));
		return;
	}
	if (env_apply(r, &env)) {
		cctl__fail(r, NULL, "%s is not installed", r->rec.id);
		return;
	}
	compile_args(b, &a, b->cc);
	if (run_logged(b, &a, &status) || status) {
		char *lib = cctl_path_join(b->lib, r->plat->windows ? "cudnn.lib"
								    : "libcudnn.so",
					   NULL);
		char *h = header_used(b);
		if (!cctl__file_exists(lib))
			cctl__fail(r, "reinstall this version: NVIDIA's archive has it",
				   "linking needs %s, and %s has none; compiler "
				   "output in %s",
				   strrchr(lib, CCTL_OS_DIR_SEP) + 1, b->lib, b->log);
		else
			cctl__fail(r, "see the compiler's output",
				   "%s failed (exit status %d) compiling or linking "
				   "against %s%s%s; output in %s",
				   b->cc, status, b->inc, h ? ", including " : "",
				   h ? h : "", b->log);
		free(lib);
		free(h);
		if (r->stages[r->current].status == CCTL_FAIL)
			cctl__finding(r, "%s; output in %s", b->cc, b->log);
	} else {
		/* before the run: for cl it is read from the compiler's output */
		struct argv p = { 0 };
		char *h = header_used(b);
		arg(&p, cctl_xstrdup(b->exe));
		if (run_logged(b, &p, &status))
			status = 127;
		judge(b, status, h);
		argv_free(&p);
		free(h);
	}
	argv_free(&a);
	env_restore(&env);
}

void cctl__stage_build(struct run *r)
{
	struct build b;
	char why[200], *tmp, *leaf;

	if (!r->o->build) {
		skip(r, "not asked for (verify --build compiles a program against it)");
		return;
	}
	if (!r->have_rec) {
		skip(r, "not run: no cudnnctl install to build against");
		return;
	}
	memset(&b, 0, sizeof(b));
	b.r = r;
	cctl_buf_init(&b.out);
	cctl_buf_init(&b.err);
	if (!(b.cc = choose(&b, why, sizeof(why)))) {
		skip(r, why);
		return;
	}
	tmp = cctl_os_temp_dir();
	leaf = cctl__unique_leaf("cudnnctl-build-");
	b.work = cctl_path_join(tmp, leaf, NULL);
	free(tmp);
	free(leaf);
	b.src = cctl_path_join(b.work, "probe.c", NULL);
	b.exe = cctl_path_join(b.work, r->plat->windows ? "probe.exe" : "probe", NULL);
	b.deps = cctl_path_join(b.work, "probe.d", NULL);
	b.log = cctl_path_join(b.work, "build.log", NULL);
	b.inc = cctl_path_join(r->dir, "include", NULL);
	if (r->plat->windows) { /* lib\x64 from 8.8.0, lib before */
		char alt[32];
		struct cctl_os_stat st;
		snprintf(alt, sizeof(alt), "lib/%s", r->plat->arch);
		b.lib = cctl_path_join(r->dir, alt, NULL);
		cctl_os_native_path(b.lib);
		if (cctl_os_stat(NULL, b.lib, &st) || st.type != CCTL_OS_DIR) {
			free(b.lib);
			b.lib = NULL;
		}
	}
	if (!b.lib)
		b.lib = cctl_path_join(r->dir, "lib", NULL);
	cctl_os_native_path(b.inc);
	cctl_os_native_path(b.lib);
	if (cctl_os_mkdir(r->ctx, b.work))
		cctl__fail(r, "make the temporary folder writable (TMPDIR, TEMP)",
			   "%s", cctl__msg(r->ctx));
	else
		build_run(&b);
	/* the build is its own question: the GPU stages still run */
	r->go_on = 1;
	if (r->stages[r->current].status == CCTL_PASS)
		cctl_os_rmtree(NULL, b.work);
	cctl_buf_release(&b.out);
	cctl_buf_release(&b.err);
	free(b.work);
	free(b.src);
	free(b.exe);
	free(b.deps);
	free(b.log);
	free(b.inc);
	free(b.lib);
}
