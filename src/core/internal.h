/* Helpers shared by the core files; not part of the public API. */
#ifndef CUDNNCTL_INTERNAL_H
#define CUDNNCTL_INTERNAL_H

#include "cudnnctl/cudnnctl.h"

/* Sets ctx's code and message (and clears the hint and the OS error) and
 * returns code; with a NULL ctx only returns code.  The helpers below
 * take a NULL ctx too. */
int cctl__error(struct cctl_ctx *ctx, int code, const char *fmt, ...) CCTL_FORMAT(3, 4);
/* The same, keeping the OS's own error number (errno, GetLastError()). */
int cctl__os_error(struct cctl_ctx *ctx, int code, int oserr, const char *fmt,
		   ...) CCTL_FORMAT(4, 5);
/* CCTL_EINTERRUPTED once the user interrupted (Ctrl+C, SIGTERM...), else
 * 0: the long loops call it and stop, and their failure path cleans up.
 * Test hook: CUDNNCTL_TEST_INTERRUPT_AT=N interrupts the process at the
 * Nth call, as a Ctrl+C there would. */
int cctl__interrupt(struct cctl_ctx *ctx);
/* The same without the test hook: for threads whose calls come in no set
 * order (the hook counts calls). */
int cctl__interrupted(struct cctl_ctx *ctx);
/* A name no other run uses: prefix, the process id and random digits
 * (".staging-4242-9f3a01c2"; free()). */
char *cctl__unique_leaf(const char *prefix);
/* The last message, "" for a NULL ctx. */
const char *cctl__msg(const struct cctl_ctx *ctx);
/* Sets the next step for the user on the last error. */
void cctl__hint(struct cctl_ctx *ctx, const char *fmt, ...) CCTL_FORMAT(2, 3);
void cctl__warn(struct cctl_ctx *ctx, const char *fmt, ...) CCTL_FORMAT(2, 3);
/* Tells on_notice (the release chosen, manifests fetched). */
void cctl__notice(struct cctl_ctx *ctx, enum cctl_notice kind,
		  const char *fmt, ...) CCTL_FORMAT(3, 4);
/* A warning only --verbose shows (ctx->verbose). */
void cctl__note(struct cctl_ctx *ctx, const char *fmt, ...) CCTL_FORMAT(2, 3);
void cctl__progress(struct cctl_ctx *ctx, enum cctl_phase phase,
		    uint64_t done, uint64_t total);

/* The CUDA major a name carries ("..._cuda12-archive.zip" -> 12), or 0. */
int cctl__cuda_from_name(const char *name);
/* The last path separator of path ('/', and '\\' on Windows), or NULL. */
const char *cctl__last_sep(const char *path);
/* The folder versions/.resume-* that keeps the members of the zip being
 * downloaded into part (archive-resume.c): its name; whether folder (one
 * such) belongs to no .part that is there (a sweep removes it); removed. */
char *cctl__resume_leaf(const char *part);
int cctl__resume_orphan(const char *folder);
void cctl__resume_drop(const char *parent, const char *part);
/* The digest of what h has hashed so far; h goes on (hash.c). */
void cctl__sha256_peek(const struct cctl_sha256 *h, char hex[65]);
/* Hashing on a second thread (hashq.c): blocks are copied and hashed in
 * the order given, final writes the hex digest (and frees h) there; drain
 * waits for all of it; free drains too.  Without a thread (or with a NULL
 * q), all of it happens at once in the caller's. */
struct cctl__hashq;
struct cctl__hashq *cctl__hashq_new(void);
void cctl__hashq_update(struct cctl__hashq *q, struct cctl_sha256 *h,
			const void *data, size_t len);
void cctl__hashq_final(struct cctl__hashq *q, struct cctl_sha256 *h,
		       char hex[65]);
void cctl__hashq_drain(struct cctl__hashq *q);
void cctl__hashq_free(struct cctl__hashq *q);
/* xz decoding on several threads (xz.c, liblzma): fill gives the next
 * compressed bytes (*len 0 at the end; nonzero return: a read error,
 * already described); read gives up to cap decoded bytes, 0 at the end,
 * -1 on an error (xz_error says what, NULL when it was fill's). */
typedef int (*cctl__xz_fill_fn)(void *ud, const void **buf, size_t *len);
struct cctl__xz;
int cctl__xz_magic(const void *buf, size_t n);
/* From the last 12 bytes of an xz file (the stream footer): the size of
 * the index just before it, 0 when they are not a footer; and from that
 * index, the number of blocks of the (last) stream, 0 when it is not one. */
uint64_t cctl__xz_index_size(const void *footer);
uint64_t cctl__xz_block_count(const void *index, size_t n);
struct cctl__xz *cctl__xz_new(unsigned threads, cctl__xz_fill_fn fill,
			      void *ud);
long cctl__xz_read(struct cctl__xz *x, void *out, size_t cap);
/* A decoder of a file on the disk whose xz blocks are decoded on threads
 * of its own (up to jobs): head is the file's first bytes (the stream
 * header and the first block's header: 12 + 1024 will do), tail its last
 * (the index and the stream footer), file_size its size; fill reads the
 * file from its start.  NULL where that cannot be (one block, blocks
 * too big for the memory allowed, not one stream of file_size bytes, no
 * threads): the caller makes the other decoder.  Read it with
 * cctl__xz_next: *out (valid until the next call) gets the next decoded
 * bytes, their count returned (0 at the end, -1 on an error, as read). */
struct cctl__xz *cctl__xz_blocks_new(unsigned jobs, const void *head, size_t head_len,
				     const void *tail, size_t tail_len,
				     uint64_t file_size, cctl__xz_fill_fn fill, void *ud);
long cctl__xz_next(struct cctl__xz *x, const void **out);
/* The threads decoding x's blocks; 0 when x is not in blocks mode. */
unsigned cctl__xz_blocks_threads(const struct cctl__xz *x);
const char *cctl__xz_error(const struct cctl__xz *x);
/* 1 when that error was running out of memory. */
int cctl__xz_nomem(const struct cctl__xz *x);
void cctl__xz_free(struct cctl__xz *x);
/* The folder of an install's libraries: dir/lib_alt when the install has
 * it (Windows 9.23 and later: bin/x64, bin/arm64), else dir/lib_dir
 * (free()). */
char *cctl__lib_dir(const struct cctl_platform *p, const char *dir);
/* A PATH-style list with dir first and its other copies dropped (free()). */
char *cctl__path_list_prepend(const char *dir, const char *list);
/* fmt with its one "%d" (if any) replaced by v (free()). */
char *cctl__subst_d(const char *fmt, int v);
/* The file name of the i-th built-in manifest, NULL past the last. */
const char *cctl__builtin_manifest_name(size_t i);
/* True when the root's activation is system-wide (--system, --scope
 * machine). */
int cctl__activation_is_system(const struct cctl_root *r);
/* The active install was activated in CI mode: nothing persisted, new
 * processes have only what their environment says. */
int cctl__activation_is_ci(const struct cctl_root *r);

/* s ends with suffix. */
int cctl__ends_with(const char *s, const char *suffix);
/* 0 when path lies inside base (cctl_path_within), else
 * CCTL_EMANIFEST naming what ("install folder", "archive in the cache"),
 * the path and the base: the last check before a path made from outside
 * values is read or written. */
int cctl__check_within(struct cctl_ctx *ctx, const char *base,
		       const char *path, const char *what);

/* Writes into an install's staging folder the CMake package config
 * (lib/cmake/CUDNN) and pkg-config file (lib/pkgconfig/cudnn.pc) its
 * record describes, and adds them to rec->files (buildcfg.c).  Files the
 * archive brings itself are kept. */
int cctl__write_build_files(struct cctl_ctx *ctx, const char *staging,
			    struct cctl_install *rec);

/* After `current` changed (activate, deactivate): the files link-cuda
 * placed follow it (cudalink.c); nothing placed, nothing to do. */
int cctl__cuda_link_refresh(struct cctl_ctx *ctx, const struct cctl_root *r);

/* "9.19.0": Linux from the library file's name behind its links
 * (libcudnn_ops.so.9.19.0), Windows from its FileVersion; NULL when it
 * does not say (verify-libs.c; scan's copies too). */
char *cctl__lib_file_version(const struct cctl_platform *p, const char *path);
/* scan-owner.c: a copy's version (and where it was read), CUDA major,
 * missing libraries, mixed releases and owner (all but the package
 * managers'); then, for the copies whose owner is still unknown, the
 * package that has the file: quick, from the file lists of the dpkg
 * packages named *cudnn*; thorough (before quarantine moves a file), one
 * dpkg-query (else rpm) asked about all of them at once. */
void cctl__copy_describe(struct cctl_copy *c, const struct cctl_root *root,
			 const char *active_dir);
void cctl__copy_packages(struct cctl_copy *v, size_t n, int thorough);
void cctl__copy_release(struct cctl_copy *c);
/* A cuDNN library of a major this build knows, or (Linux) a file behind
 * one's links (libcudnn_ops.so.9.1.0, libcudnn.so) (inuse.c). */
int cctl__is_cudnn_file(const struct cctl_platform *p, const char *base);
/* Finishes or undoes a quarantine or a restore cut short (a kill, a power
 * cut), so every file is in one place (quarantine.c); under the root
 * lock. */
int cctl__quarantine_recover(struct cctl_ctx *ctx, const struct cctl_root *r);

/* path with its links resolved, or path itself when that fails
 * (free()): for comparing folders. */
char *cctl__real_path(const char *path);

/* What a lock file holds ("4242\ninstall 9.19\n", as cctl_os_lock writes
 * it) as words for a message: "process 4242 (install 9.19)"; nothing
 * when it holds no process id.  Anything else in it is left out: the
 * text comes from another process. */
void cctl__lock_holder(const char *text, struct cctl_buf *out);
/* 0 when no one but this user and the administrator can change the root,
 * its versions/, current and env.sh (with system: only the administrator,
 * and every folder above the root too); else, with refuse, CCTL_EBADROOT
 * naming the path, its owner or mode and the fix, or without, a warning
 * and 0 (trust.c). */
int cctl__root_trusted(struct cctl_ctx *ctx, const char *root, int refuse,
		       int system);
/* The length of the manifest name ("redistrib_9.1.0.json") at p, 0 when
 * none is there (mirror.c). */
size_t cctl__manifest_name_at(const char *p);

/* An install that reads the archive as it downloads (feed.h):
 * archive-scan.c's scan of the feed (a->fd is -1 after it); install.c's
 * identify through it, then, once the download is whole, the archive in
 * the cache opened in the feed's place (refile), and the install's
 * other steps (finish: check, place, activate; ret nonzero: only the
 * job released). */
struct cctl__feed;
int cctl__archive_scan_fed(struct cctl_ctx *ctx, struct cctl__feed *feed,
			   const char *file, const char *unpack_dir,
			   unsigned jobs, struct cctl_archive *a);
int cctl__install_identify_fed(struct cctl_ctx *ctx, const struct cctl_root *r,
			       const struct cctl_manifest *m,
			       const struct cctl_install_opts *o,
			       struct cctl__feed *feed,
			       struct cctl_install_job *job,
			       struct cctl_install_result *res);
int cctl__install_refile(struct cctl_ctx *ctx, struct cctl_install_job *job);
int cctl__install_finish(struct cctl_ctx *ctx, struct cctl_root *r,
			 struct cctl_install_job *job,
			 struct cctl_install_result *res, int ret);

#define CCTL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
