/*
 * Shared libraries (os.h) on Linux with glibc: the search order of glibc's
 * loader for a bare library name (LD_LIBRARY_PATH, RUNPATH, ld.so.cache,
 * the default folders), and loading one.  Reading a library file is
 * image-posix.c's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "posix.h"

extern char **environ;

#define MAX_LDCACHE (64u << 20)
#define MAX_LDCONFIG_OUT (16u << 20)

/* ------------------------------------------------ ld.so.cache */

/*
 * The name => path pairs of the loader's cache, parsed once per process
 * and kept in a static: a dozen searches cost one read.  The file is
 * stat()ed on each search and parsed again when it changed (ldconfig ran
 * in between, or CUDNNCTL_LDSO_CACHE names another file).  Not
 * thread-safe; the memory is kept until exit.
 */
struct ldcache_pair {
	const char *key;
	const char *value;
};

static struct ldcache {
	char *file;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char *blob; /* the strings the pairs point into */
	struct ldcache_pair *v;
	size_t n;
} memo;

static void memo_clear(void)
{
	free(memo.file);
	free(memo.blob);
	free(memo.v);
	memset(&memo, 0, sizeof(memo));
}

#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_HDR 48
#define CACHE_NEW_ENT 24
#define CACHE_OLD_HDR 16
#define CACHE_OLD_ENT 12

/* glibc aligns the new table after the old one as struct cache_file_new,
 * whose alignment is that of its uint64_t hwcap field. */
struct cache_align_probe {
	int32_t flags;
	uint64_t hwcap;
};
#define CACHE_ALIGN _Alignof(struct cache_align_probe)

static uint32_t host32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Parses the glibc format ("glibc-ld.so.cache1.1" header, 24-byte
 * entries), alone or after the old "ld.so-1.7.0" table (the combined
 * format of glibc < 2.32).  In both, string offsets count from the start
 * of the new header.  Entries are in host byte order.  data is
 * NUL-terminated at data[len].  Returns -1 when the format is not one of
 * these.
 */
static int ldcache_parse(char *data, size_t len)
{
	size_t base = 0, avail, nlibs;
	unsigned endian;

	if (len >= CACHE_OLD_HDR &&
	    !memcmp(data, CACHE_OLD_MAGIC, sizeof(CACHE_OLD_MAGIC) - 1)) {
		size_t nold = host32(data + 12);
		if (nold > (len - CACHE_OLD_HDR) / CACHE_OLD_ENT)
			return -1;
		base = CACHE_OLD_HDR + nold * CACHE_OLD_ENT;
		base = (base + CACHE_ALIGN - 1) & ~(size_t)(CACHE_ALIGN - 1);
	}
	if (base > len || len - base < CACHE_NEW_HDR ||
	    memcmp(data + base, CACHE_NEW_MAGIC, sizeof(CACHE_NEW_MAGIC) - 1))
		return -1;
	endian = (unsigned char)data[base + 28] & 3;
	if (endian == 1 || (endian == 2 && HOST_DATA != ELFDATA2LSB) ||
	    (endian == 3 && HOST_DATA != ELFDATA2MSB))
		return -1;
	avail = len - base;
	nlibs = host32(data + base + 20);
	if (nlibs > (avail - CACHE_NEW_HDR) / CACHE_NEW_ENT)
		return -1;
	memo.v = cctl_xcalloc(nlibs ? nlibs : 1, sizeof(*memo.v));
	for (size_t i = 0; i < nlibs; i++) {
		const char *p = data + base + CACHE_NEW_HDR + i * CACHE_NEW_ENT;
		uint32_t key = host32(p + 4), value = host32(p + 8);
		/* strings end at the file's end at worst (data[len] == 0) */
		if (key >= avail || value >= avail)
			continue;
		memo.v[memo.n].key = data + base + key;
		memo.v[memo.n].value = data + base + value;
		memo.n++;
	}
	return 0;
}

static int read_small_file(const char *path, struct cctl_buf *out)
{
	char tmp[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = read(fd, tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto cleanup;
		if (got == 0)
			break;
		cctl_buf_add(out, tmp, (size_t)got);
		if (out->len > MAX_LDCACHE)
			goto cleanup;
	}
	ret = 0;
cleanup:
	close(fd);
	return ret;
}

/* Runs `ldconfig -p -C file` and keeps its output in out. */
static int ldconfig_print(const char *file, struct cctl_buf *out)
{
	static const char *const tries[] = { "/sbin/ldconfig",
					     "/usr/sbin/ldconfig", "ldconfig" };
	char *argv[] = { NULL, "-p", "-C", (char *)file, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2] = { -1, -1 }, status, ret = -1, spawned = -1;
	pid_t pid = -1;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(tries) && spawned; i++) {
		argv[0] = (char *)tries[i];
		if (strchr(tries[i], '/'))
			spawned = posix_spawn(&pid, tries[i], &fa, NULL, argv,
					      environ);
		else
			spawned = posix_spawnp(&pid, tries[i], &fa, NULL, argv,
					       environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (spawned)
		goto cleanup;
	for (;;) {
		char tmp[65536];
		ssize_t got = read(fds[0], tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (out->len < MAX_LDCONFIG_OUT)
			cctl_buf_add(out, tmp, (size_t)got);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			goto cleanup;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    out->len < MAX_LDCONFIG_OUT)
		ret = 0;
cleanup:
	close(fds[0]);
	return ret;
}

/* Lines "\tname (flags) => path" of `ldconfig -p`, split in place. */
static void ldconfig_parse(char *text)
{
	size_t alloc = 0;
	char *line = text;

	while (line && *line) {
		char *next = strchr(line, '\n'), *paren, *arrow;
		if (next)
			*next++ = '\0';
		if (line[0] == '\t' && (paren = strstr(line, " (")) &&
		    (arrow = strstr(paren, ") => "))) {
			*paren = '\0';
			if (memo.n == alloc) {
				alloc = alloc ? 2 * alloc : 256;
				memo.v = cctl_xrealloc(memo.v,
						       alloc * sizeof(*memo.v));
			}
			memo.v[memo.n].key = line + 1;
			memo.v[memo.n].value = arrow + 5;
			memo.n++;
		}
		line = next;
	}
}

/* The cache's pairs, parsed when the file is new or changed; NULL when
 * the cache is missing or unreadable (the loader then skips it too). */
static const struct ldcache *ldcache_get(void)
{
	const char *file = getenv("CUDNNCTL_LDSO_CACHE");
	struct cctl_buf b = CCTL_BUF_INIT;
	struct stat st;

	if (!file || !*file)
		file = "/etc/ld.so.cache";
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	if (memo.file && !strcmp(memo.file, file) && memo.dev == st.st_dev &&
	    memo.ino == st.st_ino && memo.size == st.st_size &&
	    memo.mtime.tv_sec == st.st_mtim.tv_sec &&
	    memo.mtime.tv_nsec == st.st_mtim.tv_nsec)
		return &memo;
	memo_clear();
	if (read_small_file(file, &b) || ldcache_parse(b.buf, b.len)) {
		/* a format this reader does not know: ask ldconfig; when it
		 * cannot read the file either, remember an empty cache */
		cctl_buf_reset(&b);
		if (ldconfig_print(file, &b) == 0)
			ldconfig_parse(b.buf);
	}
	memo.file = cctl_xstrdup(file);
	memo.dev = st.st_dev;
	memo.ino = st.st_ino;
	memo.size = st.st_size;
	memo.mtime = st.st_mtim;
	memo.blob = cctl_buf_detach(&b);
	return &memo;
}

/* ------------------------------------------------ search */

struct search {
	struct cctl_lib_hits *out;
	size_t alloc;
	struct file_id {
		dev_t dev;
		ino_t ino;
	} *ids;
	const char *name;
	struct cctl_buf path;
};

/* A regular file (links followed) that this process could load. */
static int probe(const char *path, struct file_id *id)
{
	return cctl__elf_probe(path, &id->dev, &id->ino);
}

static void add_file(struct search *s, const char *path, const char *origin)
{
	struct cctl_lib_hits *h = s->out;
	struct file_id id;

	if (!probe(path, &id))
		return;
	for (size_t i = 0; i < h->n; i++)
		if (s->ids[i].dev == id.dev && s->ids[i].ino == id.ino)
			return;
	if (h->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 8;
		h->v = cctl_xrealloc(h->v, s->alloc * sizeof(*h->v));
		s->ids = cctl_xrealloc(s->ids, s->alloc * sizeof(*s->ids));
	}
	h->v[h->n].path = cctl_xstrdup(path);
	h->v[h->n].origin = cctl_xstrdup(origin);
	s->ids[h->n] = id;
	h->n++;
}

static void add_dir(struct search *s, const char *dir, size_t len,
		    const char *origin)
{
	if (len == 0)
		return;
	cctl_buf_reset(&s->path);
	cctl_buf_add(&s->path, dir, len);
	cctl_buf_addpath(&s->path, s->name);
	add_file(s, s->path.buf, origin);
}

/* Each folder of a list separated by any of seps; empty ones skipped. */
static void add_list(struct search *s, const char *list, const char *seps,
		     const char *origin)
{
	while (list) {
		size_t len = strcspn(list, seps);
		add_dir(s, list, len, origin);
		list = list[len] ? list + len + 1 : NULL;
	}
}

/*
 * glibc's order for a bare name (ld.so(8)), without the parts that do not
 * apply here: DT_RPATH of the loading objects (the caller passes
 * RUNPATH), and the glibc-hwcaps subfolders of each folder, which are
 * not tried.  Empty elements of LD_LIBRARY_PATH, which glibc takes as
 * the current folder, are skipped.  Every entry of the cache with the
 * name counts, glibc-hwcaps variants included.
 */
int cctl_os_lib_search(struct cctl_ctx *ctx, const char *name,
		       const char *lib_path, const char *const *runpath,
		       struct cctl_lib_hits *out)
{
	static const char defaults[] =
#ifdef HOST_TRIPLET
		"/lib/" HOST_TRIPLET ":/usr/lib/" HOST_TRIPLET ":"
#endif
		"/lib64:/usr/lib64:/lib:/usr/lib";
	struct search s = { 0 };
	const struct ldcache *cache;
	const char *dirs;

	memset(out, 0, sizeof(*out));
	if (!name || !*name || strchr(name, '/'))
		return cctl__error(ctx, CCTL_EFAIL,
				   "'%s' is not a bare library name",
				   name ? name : "");
	s.out = out;
	s.name = name;
	cctl_buf_init(&s.path);
	if (lib_path)
		add_list(&s, lib_path, ":;", "LD_LIBRARY_PATH");
	for (size_t i = 0; runpath && runpath[i]; i++)
		add_dir(&s, runpath[i], strlen(runpath[i]), "RUNPATH");
	cache = ldcache_get();
	for (size_t i = 0; cache && i < cache->n; i++)
		if (!strcmp(cache->v[i].key, name))
			add_file(&s, cache->v[i].value, "ld.so.cache");
	dirs = getenv("CUDNNCTL_LDSO_DEFAULTS");
	add_list(&s, dirs ? dirs : defaults, ":", "default folder");
	cctl_buf_release(&s.path);
	free(s.ids);
	return 0;
}

void cctl_lib_hits_release(struct cctl_lib_hits *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].path);
		free(h->v[i].origin);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* -------------------------------------------------------------- loading */

int cctl_os_dl_open(struct cctl_ctx *ctx, const char *path, void **handle)
{
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		const char *why = dlerror();
		return cctl__error(ctx, CCTL_EFAIL, "cannot load '%s': %s", path,
				   why ? why : "unknown reason");
	}
	return 0;
}

void *cctl_os_dl_sym(void *handle, const char *name)
{
	return dlsym(handle, name);
}

struct loaded {
	char **v;
	size_t n;
};

static int each_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded *l = data;
	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] == '/') {
		l->v = cctl_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		l->v[l->n++] = cctl_xstrdup(info->dlpi_name);
	}
	return 0;
}

int cctl_os_loaded_libraries(struct cctl_ctx *ctx, char ***paths, size_t *n)
{
	struct loaded l = { NULL, 0 };
	(void)ctx;
	dl_iterate_phdr(each_object, &l);
	*paths = l.v;
	*n = l.n;
	return 0;
}

int cctl_os_dl_path(struct cctl_ctx *ctx, void *handle, struct cctl_buf *out)
{
	struct link_map *map = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
		return cctl__error(ctx, CCTL_EFAIL,
				   "cannot tell which file was loaded: %s",
				   dlerror());
	cctl_buf_adds(out, map->l_name);
	return 0;
}

/* atomic (lock-free, so a signal handler may set it): the threads of an
 * extraction or of a download's ranges read it */
static _Atomic int interrupted;

static void on_interrupt(int sig)
{
	static const char msg[] = "\ncudnnctl: interrupted again: stopping now\n";
	(void)sig;
	if (interrupted) {
		/* a second Ctrl+C: at once, whatever is left */
		ssize_t ignore = write(2, msg, sizeof(msg) - 1);
		(void)ignore;
		_exit(130);
	}
	interrupted = 1;
}

/* Nothing to lock down or put back on POSIX; interrupts set a flag. */
void cctl_os_process_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int cctl_os_interrupted(void)
{
	return interrupted != 0;
}

void cctl_os_raise_interrupt(void)
{
	raise(SIGINT);
}

_Noreturn void cctl_os_exit(int status)
{
	_Exit(status);
}

void cctl_os_process_done(void)
{
}
