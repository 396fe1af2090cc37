/* The loader view: ELF dynamic sections, ld.so.cache, the search order. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/os.h"
#include "harness.h"

#define CUDNN_DIR "/usr/local/cuda-13.0/lib"

/* ------------------------------------------------ helpers */

static char *make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *p = cctl_xstrfmt("%s/cctl-loader-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void rmtree(char *dir)
{
	struct cctl_ctx ctx;
	cctl_ctx_init(&ctx);
	if (dir)
		cctl_os_rmtree(&ctx, dir);
	free(dir);
}

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ok;
	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

/* Copies at most max bytes (0: all). */
static int copy_file(const char *from, const char *to, size_t max)
{
	struct cctl_ctx ctx;
	struct cctl_buf b = CCTL_BUF_INIT;
	int ret;
	cctl_ctx_init(&ctx);
	if (cctl_os_read_file(&ctx, from, &b))
		return -1;
	ret = write_file(to, b.buf, max && max < b.len ? max : b.len);
	cctl_buf_release(&b);
	return ret;
}

static int patch(const char *path, long off, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;
	if (fd < 0)
		return -1;
	ok = pwrite(fd, bytes, n, off) == (ssize_t)n;
	close(fd);
	return ok ? 0 : -1;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int exists(const char *path)
{
	return access(path, R_OK) == 0;
}

static char *libc_found;

static int find_libc_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *n = info->dlpi_name;
	size_t len = n ? strlen(n) : 0;
	(void)size;
	(void)data;
	if (len > 10 && !strcmp(n + len - 10, "/libc.so.6")) {
		libc_found = cctl_xstrdup(n);
		return 1;
	}
	return 0;
}

/* The libc this process runs with, e.g. /lib/x86_64-linux-gnu/libc.so.6;
 * the caller frees it. */
static char *system_libc(void)
{
	libc_found = NULL;
	dl_iterate_phdr(find_libc_cb, NULL);
	return libc_found;
}

/* A small real library next to libc, and its name. */
static char *small_lib(const char **name)
{
	char *libc = system_libc(), *dl;
	if (!libc)
		return NULL;
	dl = cctl_xstrfmt("%.*s/libdl.so.2",
			  (int)(strrchr(libc, '/') - libc), libc);
	if (exists(dl)) {
		free(libc);
		*name = "libdl.so.2";
		return dl;
	}
	free(dl);
	*name = "libc.so.6";
	return libc;
}

static uint16_t other_machine(void)
{
#if defined(__aarch64__)
	return EM_X86_64;
#else
	return EM_AARCH64;
#endif
}

static int has_needed(const struct cctl_lib_info *li, const char *name)
{
	for (size_t i = 0; i < li->nneeded; i++)
		if (!strcmp(li->needed[i], name))
			return 1;
	return 0;
}

/*
 * A hand-made ELF shared library: a PT_LOAD at vaddr 0x10000 mapping the
 * whole file, a PT_DYNAMIC, a string table.  `bad` spoils one thing.
 */
enum bad { GOOD, BAD_STRIDX, BAD_NOMAP, BAD_DYNOUT, BAD_NOTERM, BAD_XNUM,
	   BAD_NOSTRTAB };

struct elfgen {
	unsigned char b[2048];
	int is64, le;
};

static void put(struct elfgen *g, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		g->b[off + (size_t)(g->le ? i : n - 1 - i)] =
			(unsigned char)(v >> (8 * i));
}

static int make_elf(const char *path, int is64, int le, uint16_t machine,
		    const char *soname, const char *needed, const char *runpath,
		    enum bad bad)
{
	struct elfgen g;
	size_t w = is64 ? 8 : 4, ph = 64, str = 256, dyn = 1024, s = 1, d;
	size_t off_soname, off_needed, off_runpath, phe = is64 ? 56 : 32;
	const uint64_t va = 0x10000;

	memset(&g, 0, sizeof(g));
	g.is64 = is64;
	g.le = le;
	/* strings */
	off_soname = s;
	strcpy((char *)g.b + str + s, soname);
	s += strlen(soname) + 1;
	off_needed = s;
	strcpy((char *)g.b + str + s, needed);
	s += strlen(needed) + 1;
	off_runpath = s;
	strcpy((char *)g.b + str + s, runpath);
	s += strlen(runpath) + 1;
	/* header */
	memcpy(g.b, ELFMAG, SELFMAG);
	g.b[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	g.b[EI_DATA] = le ? ELFDATA2LSB : ELFDATA2MSB;
	g.b[EI_VERSION] = EV_CURRENT;
	put(&g, 16, ET_DYN, 2);
	put(&g, 18, machine, 2);
	put(&g, 20, EV_CURRENT, 4);
	if (is64) {
		put(&g, 32, ph, 8);
		put(&g, 52, 64, 2);
		put(&g, 54, phe, 2);
		put(&g, 56, bad == BAD_XNUM ? PN_XNUM : 2, 2);
	} else {
		put(&g, 28, ph, 4);
		put(&g, 40, 52, 2);
		put(&g, 42, phe, 2);
		put(&g, 44, bad == BAD_XNUM ? PN_XNUM : 2, 2);
	}
	/* program headers: PT_LOAD, PT_DYNAMIC */
	for (int i = 0; i < 2; i++) {
		size_t p = ph + (size_t)i * phe;
		uint64_t off = i ? dyn : 0, size = i ? 6 * 2 * w : sizeof(g.b);
		if (i && bad == BAD_DYNOUT)
			off = 1u << 20;
		put(&g, p, i ? PT_DYNAMIC : PT_LOAD, 4);
		if (is64) {
			put(&g, p + 8, off, 8);
			put(&g, p + 16, va + off, 8);
			put(&g, p + 32, size, 8);
			put(&g, p + 40, size, 8);
		} else {
			put(&g, p + 4, off, 4);
			put(&g, p + 8, va + off, 4);
			put(&g, p + 16, size, 4);
			put(&g, p + 20, size, 4);
		}
	}
	/* dynamic section */
	d = dyn;
	put(&g, d, DT_NEEDED, (int)w);
	put(&g, d + w, bad == BAD_STRIDX ? 100000 : off_needed, (int)w);
	d += 2 * w;
	put(&g, d, DT_SONAME, (int)w);
	put(&g, d + w, off_soname, (int)w);
	d += 2 * w;
	put(&g, d, DT_RUNPATH, (int)w);
	put(&g, d + w, off_runpath, (int)w);
	d += 2 * w;
	if (bad != BAD_NOSTRTAB) {
		put(&g, d, DT_STRTAB, (int)w);
		put(&g, d + w, bad == BAD_NOMAP ? 0x900000 : va + str, (int)w);
		d += 2 * w;
	}
	put(&g, d, DT_STRSZ, (int)w);
	put(&g, d + w, bad == BAD_NOTERM ? off_needed + 3 : s, (int)w);
	return write_file(path, g.b, sizeof(g.b));
}

/* ------------------------------------------------ lib_info */

static void info_libc(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_info li;
	char *libc = system_libc();
	cctl_ctx_init(&ctx);
	CHECK(libc != NULL);
	CHECK_INT(cctl_os_lib_info(&ctx, libc, &li), 0);
	free(libc);
	CHECK_STR(li.soname, "libc.so.6");
	CHECK_INT(li.loadable, 1);
	CHECK(li.nneeded >= 1); /* the dynamic loader */
	CHECK(li.file_version == NULL);
	cctl_lib_info_release(&li);
	CHECK(li.soname == NULL && li.needed == NULL && li.nneeded == 0);
}

static void info_elf32(void)
{
	/* a real 32-bit library, when multilib is installed */
	static const char *const paths[] = { "/lib32/libc.so.6",
					     "/usr/lib32/libc.so.6",
					     "/lib/i386-linux-gnu/libc.so.6" };
	struct cctl_ctx ctx;
	struct cctl_lib_info li;
	cctl_ctx_init(&ctx);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!exists(paths[i]))
			continue;
		CHECK_INT(cctl_os_lib_info(&ctx, paths[i], &li), 0);
		CHECK_STR(li.soname, "libc.so.6");
		CHECK_INT(li.loadable, sizeof(void *) == 4);
		cctl_lib_info_release(&li);
		return;
	}
}

static void info_cudnn(void)
{
	const char *path = CUDNN_DIR "/libcudnn_ops.so.9";
	struct cctl_ctx ctx;
	struct cctl_lib_info li;
	if (!exists(path))
		return;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_os_lib_info(&ctx, path, &li), 0);
	CHECK_STR(li.soname, "libcudnn_ops.so.9");
	CHECK(has_needed(&li, "libcudnn_graph.so.9"));
	CHECK(has_needed(&li, "libz.so.1"));
	CHECK_STR(li.needed[0], "libcudnn_graph.so.9");
	CHECK(li.nrunpath >= 1);
	CHECK_STR(li.runpath[0], CUDNN_DIR);
	CHECK_INT(li.loadable, 1);
	cctl_lib_info_release(&li);
}

/* Both classes, both byte orders; RUNPATH elements and $ORIGIN forms. */
static void info_crafted(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_info li = { 0 };
	char *dir = make_tmpdir(), *path = NULL, *want = NULL;
	uint16_t mine = 0;
	struct cctl_lib_info self;
	cctl_ctx_init(&ctx);
	CHECK(dir != NULL);
	{
		char *libc = system_libc();
		CHECK(libc != NULL);
		CHECK_INT(cctl_os_lib_info(&ctx, libc, &self), 0);
		cctl_lib_info_release(&self);
		/* our machine, from the running libc's header */
		int fd = open(libc, O_RDONLY);
		unsigned char h[20];
		CHECK(fd >= 0);
		CHECK(pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h));
		close(fd);
		free(libc);
		memcpy(&mine, h + 18, 2);
	}
	path = cctl_xstrfmt("%s/libgen.so.1", dir);
	for (int is64 = 0; is64 < 2; is64++) {
		for (int le = 0; le < 2; le++) {
			CHECK_INT(make_elf(path, is64, le, mine, "libgen.so.1",
					   "libdep.so.2",
					   "$ORIGIN/../lib:${ORIGIN}::/abs:"
					   "$ORIGINX/y:a$ORIGIN",
					   GOOD),
				  0);
			CHECK_INT(cctl_os_lib_info(&ctx, path, &li), 0);
			CHECK_STR(li.soname, "libgen.so.1");
			CHECK_INT(li.nneeded, 1);
			CHECK_STR(li.needed[0], "libdep.so.2");
			CHECK_INT(li.nrunpath, 5);
			free(want);
			want = cctl_xstrfmt("%s/../lib", dir);
			CHECK_STR(li.runpath[0], want);
			CHECK_STR(li.runpath[1], dir);
			CHECK_STR(li.runpath[2], "/abs");
			CHECK_STR(li.runpath[3], "$ORIGINX/y");
			free(want);
			want = cctl_xstrfmt("a%s", dir);
			CHECK_STR(li.runpath[4], want);
			CHECK_INT(li.loadable,
				  is64 == (sizeof(void *) == 8) &&
					  le == (__BYTE_ORDER__ ==
						 __ORDER_LITTLE_ENDIAN__));
			cctl_lib_info_release(&li);
		}
	}
	/* a relative path: $ORIGIN is made absolute, links kept */
	{
		char *cwd = getcwd(NULL, 0);
		CHECK(cwd != NULL);
		CHECK_INT(chdir(dir), 0);
		int ret = cctl_os_lib_info(&ctx, "libgen.so.1", &li);
		CHECK_INT(chdir(cwd), 0);
		free(cwd);
		CHECK_INT(ret, 0);
		CHECK_STR(li.runpath[1], dir);
		cctl_lib_info_release(&li);
	}
	free(want);
	free(path);
	rmtree(dir);
}

static void expect_refused(const char *path, const char *reason)
{
	struct cctl_ctx ctx;
	struct cctl_lib_info li;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_os_lib_info(&ctx, path, &li), CCTL_EFAIL);
	CHECK_CONTAINS(ctx.msg, path);
	CHECK_CONTAINS(ctx.msg, reason);
	CHECK(li.soname == NULL && li.needed == NULL && li.runpath == NULL);
}

static void info_hostile(void)
{
	static const struct {
		enum bad bad;
		const char *reason;
	} crafted[] = {
		{ BAD_STRIDX, "string offset" },
		{ BAD_NOMAP, "string table outside" },
		{ BAD_DYNOUT, "dynamic section outside" },
		{ BAD_NOTERM, "unterminated" },
		{ BAD_XNUM, "program headers" },
		{ BAD_NOSTRTAB, "no string table" },
	};
	static const char garbage[] = "\177ELF\002\001\001\0garbage garbage garbage "
				      "garbage garbage garbage garbage garbage";
	static const char badclass[] = "\177ELF\007\001\001\0garbage";
	char *dir = make_tmpdir(), *p = NULL, *lib = NULL;
	const char *name = NULL;
	struct cctl_ctx ctx;
	struct cctl_lib_info li;

	cctl_ctx_init(&ctx);
	CHECK(dir != NULL);
	p = cctl_xstrfmt("%s/empty.so", dir);
	CHECK_INT(write_file(p, "", 0), 0);
	expect_refused(p, "empty file");
	free(p);
	p = cctl_xstrfmt("%s/text.so", dir);
	CHECK_INT(write_file(p, "INPUT(-lfoo)\n", 13), 0);
	expect_refused(p, "not an ELF file");
	free(p);
	p = cctl_xstrfmt("%s/tiny.so", dir);
	CHECK_INT(write_file(p, "\177ELF", 4), 0);
	expect_refused(p, "too short");
	free(p);
	p = cctl_xstrfmt("%s/garbage.so", dir);
	CHECK_INT(write_file(p, garbage, sizeof(garbage)), 0);
	expect_refused(p, "not a usable shared library");
	free(p);
	p = cctl_xstrfmt("%s/class.so", dir);
	CHECK_INT(write_file(p, badclass, sizeof(badclass)), 0);
	expect_refused(p, "unknown ELF class");
	free(p);
	lib = small_lib(&name);
	CHECK(lib != NULL);
	p = cctl_xstrfmt("%s/truncated.so", dir);
	CHECK_INT(copy_file(lib, p, 1000), 0);
	expect_refused(p, "outside the file");
	free(p);
	p = cctl_xstrfmt("%s/header.so", dir);
	CHECK_INT(copy_file(lib, p, 40), 0);
	expect_refused(p, "truncated ELF header");
	free(p);
	for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		p = cctl_xstrfmt("%s/crafted%zu.so", dir, i);
		CHECK_INT(make_elf(p, 1, 1, EM_X86_64, "a", "b", "c",
				   crafted[i].bad),
			  0);
		expect_refused(p, crafted[i].reason);
		free(p);
	}
	expect_refused(dir, "not a regular file");
	/* a missing file is an I/O error, not a refusal */
	p = cctl_xstrfmt("%s/missing.so", dir);
	CHECK_INT(cctl_os_lib_info(&ctx, p, &li), CCTL_EIO);
	CHECK_CONTAINS(ctx.msg, p);
	free(p);
	p = NULL;
	free(lib);
	rmtree(dir);
}

/* ------------------------------------------------ lib_search */

static void search_system_libc(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h;
	char *libc = system_libc();
	cctl_ctx_init(&ctx);
	CHECK(libc != NULL);
	CHECK_INT(cctl_os_lib_search(&ctx, "libc.so.6", NULL, NULL, &h), 0);
	CHECK(h.n >= 1);
	CHECK_STR(h.v[0].origin, exists("/etc/ld.so.cache") ? "ld.so.cache" :
							      "default folder");
	CHECK(same_file(h.v[0].path, libc));
	/* listed once, though the cache and a default folder both reach it */
	for (size_t i = 1; i < h.n; i++)
		CHECK(!same_file(h.v[i].path, libc));
	cctl_lib_hits_release(&h);
	CHECK(h.v == NULL && h.n == 0);
	free(libc);
}

static void search_lib_path_first(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h = { 0 };
	const char *name = NULL;
	char *lib = small_lib(&name), *a = make_tmpdir(), *b = make_tmpdir();
	char *c = make_tmpdir(), *pa = NULL, *pb = NULL, *pc = NULL, *list = NULL;
	unsigned char cls32 = ELFCLASS32;
	uint16_t em = other_machine();

	cctl_ctx_init(&ctx);
	CHECK(lib && a && b && c);
	pa = cctl_xstrfmt("%s/%s", a, name);
	pb = cctl_xstrfmt("%s/%s", b, name);
	pc = cctl_xstrfmt("%s/%s", c, name);
	CHECK_INT(copy_file(lib, pa, 0), 0);
	/* b: another machine; c: the 32-bit class */
	CHECK_INT(copy_file(lib, pb, 0), 0);
	CHECK_INT(patch(pb, 18, &em, 2), 0);
	CHECK_INT(copy_file(lib, pc, 0), 0);
	CHECK_INT(patch(pc, EI_CLASS, &cls32, 1), 0);
	/* empty elements and ';' are accepted */
	list = cctl_xstrfmt("%s::%s;%s", b, c, a);
	CHECK_INT(cctl_os_lib_search(&ctx, name, list, NULL, &h), 0);
	CHECK(h.n >= 2);
	CHECK_STR(h.v[0].path, pa);
	CHECK_STR(h.v[0].origin, "LD_LIBRARY_PATH");
	CHECK(same_file(h.v[1].path, lib));
	CHECK_STR(h.v[1].origin, exists("/etc/ld.so.cache") ? "ld.so.cache" :
							      "default folder");
	for (size_t i = 0; i < h.n; i++) {
		CHECK(strcmp(h.v[i].path, pb) != 0);
		CHECK(strcmp(h.v[i].path, pc) != 0);
	}
	cctl_lib_hits_release(&h);
	/* RUNPATH comes after LD_LIBRARY_PATH */
	{
		const char *rp[] = { a, NULL };
		CHECK_INT(cctl_os_lib_search(&ctx, name, b, rp, &h), 0);
		CHECK(h.n >= 2);
		CHECK_STR(h.v[0].path, pa);
		CHECK_STR(h.v[0].origin, "RUNPATH");
		cctl_lib_hits_release(&h);
	}
	free(list);
	free(pa);
	free(pb);
	free(pc);
	free(lib);
	rmtree(a);
	rmtree(b);
	rmtree(c);
}

static void search_symlink_once(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h = { 0 };
	const char *name = NULL;
	char *lib = small_lib(&name), *a = make_tmpdir(), *b = make_tmpdir();
	char *pa = NULL, *pb = NULL, *list = NULL;

	cctl_ctx_init(&ctx);
	CHECK(lib && a && b);
	pa = cctl_xstrfmt("%s/%s", a, name);
	pb = cctl_xstrfmt("%s/%s", b, name);
	CHECK_INT(copy_file(lib, pa, 0), 0);
	CHECK_INT(symlink(pa, pb), 0);
	list = cctl_xstrfmt("%s:%s:%s", b, a, b);
	CHECK_INT(cctl_os_lib_search(&ctx, name, list, NULL, &h), 0);
	CHECK(h.n >= 1);
	CHECK_STR(h.v[0].path, pb); /* the first place it is reached */
	for (size_t i = 1; i < h.n; i++)
		CHECK(!same_file(h.v[i].path, pa));
	cctl_lib_hits_release(&h);
	free(list);
	free(pa);
	free(pb);
	free(lib);
	rmtree(a);
	rmtree(b);
}

static void search_not_found(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_os_lib_search(&ctx, "libcctl-nowhere.so.42", "/tmp",
				     NULL, &h),
		  0);
	CHECK_INT(h.n, 0);
	cctl_lib_hits_release(&h);
	CHECK_INT(cctl_os_lib_search(&ctx, "/lib/libc.so.6", NULL, NULL, &h),
		  CCTL_EFAIL);
	CHECK_INT(h.n, 0);
}

/*
 * An ld.so.cache written here: entries {flags, key, value, osversion,
 * hwcap}; string offsets count from the new header.  With old > 0 the
 * old "ld.so-1.7.0" table of that many entries comes first.
 */
static int write_cache(const char *path, const char *const *kv, size_t n,
		       size_t old)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	size_t base, strings;
	uint32_t u;
	int ret;

	if (old) {
		cctl_buf_add(&b, "ld.so-1.7.0\0", 12);
		u = (uint32_t)old;
		cctl_buf_add(&b, &u, 4);
		for (size_t i = 0; i < old * 12; i++)
			cctl_buf_addch(&b, '\0');
		while (b.len % 8)
			cctl_buf_addch(&b, '\0');
	}
	base = b.len;
	cctl_buf_add(&b, "glibc-ld.so.cache1.1", 20);
	u = (uint32_t)n;
	cctl_buf_add(&b, &u, 4);
	for (size_t i = 0; i < 24; i++) /* len_strings, flags, ... unused */
		cctl_buf_addch(&b, '\0');
	strings = b.len + n * 24 - base;
	for (size_t i = 0; i < n; i++) {
		int32_t flags = 0x0303;
		uint32_t key = (uint32_t)strings, val;
		uint64_t zero = 0;
		strings += strlen(kv[2 * i]) + 1;
		val = (uint32_t)strings;
		strings += strlen(kv[2 * i + 1]) + 1;
		cctl_buf_add(&b, &flags, 4);
		cctl_buf_add(&b, &key, 4);
		cctl_buf_add(&b, &val, 4);
		cctl_buf_add(&b, &zero, 4);
		cctl_buf_add(&b, &zero, 8);
	}
	for (size_t i = 0; i < 2 * n; i++)
		cctl_buf_add(&b, kv[i], strlen(kv[i]) + 1);
	ret = write_file(path, b.buf, b.len);
	cctl_buf_release(&b);
	return ret;
}

/* The old format alone (glibc < 2.2): this reader leaves it to
 * `ldconfig -p`.  String offsets count from the end of the table. */
static int write_old_cache(const char *path, const char *const *kv, size_t n)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	uint32_t u = (uint32_t)n, off = 0;
	int ret;

	cctl_buf_add(&b, "ld.so-1.7.0\0", 12);
	cctl_buf_add(&b, &u, 4);
	for (size_t i = 0; i < 2 * n; i += 2) {
		int32_t flags = 0x0303;
		uint32_t key = off, val = off + (uint32_t)strlen(kv[i]) + 1;
		off = val + (uint32_t)strlen(kv[i + 1]) + 1;
		cctl_buf_add(&b, &flags, 4);
		cctl_buf_add(&b, &key, 4);
		cctl_buf_add(&b, &val, 4);
	}
	for (size_t i = 0; i < 2 * n; i++)
		cctl_buf_add(&b, kv[i], strlen(kv[i]) + 1);
	ret = write_file(path, b.buf, b.len);
	cctl_buf_release(&b);
	return ret;
}

static void search_crafted_cache(void)
{
	const char *name = "libcctl-test.so.1";
	struct cctl_ctx ctx;
	struct cctl_lib_hits h = { 0 };
	const char *sys;
	char *lib = small_lib(&sys), *dir = make_tmpdir();
	char *pa = NULL, *pb = NULL, *pd = NULL, *cache = NULL, *defs = NULL;
	uint16_t em = other_machine();

	cctl_ctx_init(&ctx);
	CHECK(lib && dir);
	pa = cctl_xstrfmt("%s/a-%s", dir, name);
	pb = cctl_xstrfmt("%s/b-%s", dir, name);
	defs = cctl_xstrfmt("%s/defaults", dir);
	pd = cctl_xstrfmt("%s/%s", defs, name);
	CHECK_INT(mkdir(defs, 0755), 0);
	CHECK_INT(copy_file(lib, pa, 0), 0);
	CHECK_INT(copy_file(lib, pb, 0), 0);
	CHECK_INT(patch(pb, 18, &em, 2), 0);
	CHECK_INT(copy_file(lib, pd, 0), 0);
	setenv("CUDNNCTL_LDSO_DEFAULTS", defs, 1);
	for (size_t old = 0; old < 3; old += 2) {
		const char *kv[] = { "libzzz.so", "/nowhere/libzzz.so",
				     name, pb, /* wrong machine: skipped */
				     name, pa,
				     "libaaa.so", "/nowhere/libaaa.so" };
		free(cache);
		cache = cctl_xstrfmt("%s/ld.so.cache.%zu", dir, old);
		CHECK_INT(write_cache(cache, kv, 4, old), 0);
		setenv("CUDNNCTL_LDSO_CACHE", cache, 1);
		CHECK_INT(cctl_os_lib_search(&ctx, name, NULL, NULL, &h), 0);
		CHECK_INT(h.n, 2);
		CHECK_STR(h.v[0].path, pa);
		CHECK_STR(h.v[0].origin, "ld.so.cache");
		CHECK_STR(h.v[1].path, pd);
		CHECK_STR(h.v[1].origin, "default folder");
		cctl_lib_hits_release(&h);
	}
	/* the old format, through ldconfig when there is one */
	if (exists("/sbin/ldconfig") || exists("/usr/sbin/ldconfig")) {
		const char *kv[] = { name, pa };
		free(cache);
		cache = cctl_xstrfmt("%s/ld.so.cache.old", dir);
		CHECK_INT(write_old_cache(cache, kv, 1), 0);
		setenv("CUDNNCTL_LDSO_CACHE", cache, 1);
		CHECK_INT(cctl_os_lib_search(&ctx, name, NULL, NULL, &h), 0);
		CHECK_INT(h.n, 2);
		CHECK_STR(h.v[0].path, pa);
		CHECK_STR(h.v[0].origin, "ld.so.cache");
		cctl_lib_hits_release(&h);
	}
	/* a cache no one can read: ignored, like the loader does */
	free(cache);
	cache = cctl_xstrfmt("%s/ld.so.cache.bad", dir);
	CHECK_INT(write_file(cache, "glibc-ld.so.cache1.1\377\377\377\377", 24), 0);
	setenv("CUDNNCTL_LDSO_CACHE", cache, 1);
	CHECK_INT(cctl_os_lib_search(&ctx, name, NULL, NULL, &h), 0);
	CHECK_INT(h.n, 1);
	CHECK_STR(h.v[0].origin, "default folder");
	cctl_lib_hits_release(&h);
	/* no default folders at all */
	setenv("CUDNNCTL_LDSO_DEFAULTS", "", 1);
	CHECK_INT(cctl_os_lib_search(&ctx, name, NULL, NULL, &h), 0);
	CHECK_INT(h.n, 0);
	unsetenv("CUDNNCTL_LDSO_CACHE");
	unsetenv("CUDNNCTL_LDSO_DEFAULTS");
	free(cache);
	free(defs);
	free(pa);
	free(pb);
	free(pd);
	free(lib);
	rmtree(dir);
}

static void search_cudnn(void)
{
	struct cctl_ctx ctx;
	struct cctl_lib_hits h;
	if (!exists(CUDNN_DIR "/libcudnn.so.9"))
		return;
	cctl_ctx_init(&ctx);
	CHECK_INT(cctl_os_lib_search(&ctx, "libcudnn.so.9", CUDNN_DIR, NULL,
				     &h),
		  0);
	CHECK(h.n >= 1);
	CHECK_STR(h.v[0].path, CUDNN_DIR "/libcudnn.so.9");
	CHECK_STR(h.v[0].origin, "LD_LIBRARY_PATH");
	cctl_lib_hits_release(&h);
}

HARNESS_MAIN(TEST_ENTRY(info_libc), TEST_ENTRY(info_elf32),
	     TEST_ENTRY(info_cudnn), TEST_ENTRY(info_crafted),
	     TEST_ENTRY(info_hostile), TEST_ENTRY(search_system_libc),
	     TEST_ENTRY(search_lib_path_first),
	     TEST_ENTRY(search_symlink_once), TEST_ENTRY(search_not_found),
	     TEST_ENTRY(search_crafted_cache), TEST_ENTRY(search_cudnn))
