/*
 * The install pipeline, in named steps (cudnnctl.h): identify the archive
 * (size, SHA-256, manifest match), check (platform, target, libraries,
 * path length, space), place (staging folder inside the root, extract,
 * record every file, rename into versions/<id>), activate.  Any failure
 * removes the staging folder and leaves the root as it was.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "feed.h"
#include "internal.h"

#define SPACE_MARGIN (16u << 20)

static const char *base_name(const char *path)
{
	const char *s = cctl__last_sep(path);
	return s ? s + 1 : path;
}

/* Follows a chain of symlink entries to a file entry. */
static const struct cctl_entry *resolve(const struct cctl_archive *a,
					const char *path)
{
	struct cctl_buf cur = CCTL_BUF_INIT;
	const struct cctl_entry *e = NULL;
	cctl_buf_adds(&cur, path);
	for (int hops = 0; hops < 16; hops++) {
		const char *slash;
		e = cctl_archive_find(a, cur.buf);
		if (!e || e->type != CCTL_ENTRY_SYMLINK)
			break;
		slash = strrchr(cur.buf, '/');
		if (slash) {
			cur.len = (size_t)(slash - cur.buf) + 1;
			cur.buf[cur.len] = '\0';
		} else {
			cctl_buf_reset(&cur);
		}
		cctl_buf_adds(&cur, e->link);
		e = NULL;
	}
	cctl_buf_release(&cur);
	return e && (e->type == CCTL_ENTRY_FILE || e->type == CCTL_ENTRY_HARDLINK)
		       ? e
		       : NULL;
}

/* The platform whose libraries an unknown archive holds (the host's own
 * first, so an arm64 Linux archive is not taken for x86_64). */
static const char *detect_platform(const struct cctl_archive *a)
{
	const struct cctl_platform *host = cctl_platform_host();
	const char *const order[] = { host->name, "linux-x86_64",
				      "windows-x86_64" };
	for (size_t k = 0; k < CCTL_ARRAY_SIZE(order); k++) {
		const struct cctl_platform *p = cctl_platform_find(order[k]);
		for (size_t i = 0; p && i < a->n; i++) {
			const char *path = a->v[i].path, *base = strrchr(path, '/');
			size_t n = base ? (size_t)(base - path) : 0;
			base = base ? base + 1 : path;
			if (!(n == strlen(p->lib_dir) &&
			      !strncmp(path, p->lib_dir, n)) &&
			    !(p->lib_alt && n == strlen(p->lib_alt) &&
			      !strncmp(path, p->lib_alt, n)))
				continue;
			for (const struct cctl_libset *l = p->libsets; l->major; l++)
				if (cctl_platform_is_library(p, l->major, base) ||
				    !strncmp(base, l->names[0],
					     strcspn(l->names[0], ".6")))
					return p->name;
		}
	}
	return NULL;
}

static int check_libraries(struct cctl_ctx *ctx, const struct cctl_archive *a,
			   const char *platform, int major)
{
	const struct cctl_platform *p = cctl_platform_find(platform);
	const char *const *libs = cctl_platform_libraries(p, major);
	struct cctl_buf missing = CCTL_BUF_INIT, path = CCTL_BUF_INIT;
	int ret = 0;

	if (!libs)
		return cctl__error(ctx, CCTL_EBADARCHIVE,
				   "'%s' holds cuDNN %d, which cudnnctl does "
				   "not know; it knows 8 and 9",
				   a->file, major);
	for (; *libs; libs++) {
		const char *dirs[] = { p->lib_dir, p->lib_alt };
		int found = 0;
		for (size_t d = 0; d < CCTL_ARRAY_SIZE(dirs) && !found; d++) {
			if (!dirs[d])
				continue;
			cctl_buf_reset(&path);
			cctl_buf_addf(&path, "%s/%s", dirs[d], *libs);
			found = resolve(a, path.buf) != NULL;
		}
		if (!found)
			cctl_buf_addf(&missing, "%s%s/%s", missing.len ? ", " : "",
				      p->lib_dir, *libs);
	}
	if (missing.len) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE,
				  "'%s' is incomplete: %s missing; nothing was "
				  "installed",
				  a->file, missing.buf);
		cctl__hint(ctx, "download the archive again from NVIDIA");
	}
	cctl_buf_release(&missing);
	cctl_buf_release(&path);
	return ret;
}

/* Reads back what was written, so the record holds the times verify
 * compares against. */
static int build_record(struct cctl_ctx *ctx, const struct cctl_archive *a,
			const char *staging, struct cctl_install *rec)
{
	struct cctl_buf path = CCTL_BUF_INIT;
	int ret = 0;
	rec->files = cctl_xcalloc(a->n ? a->n : 1, sizeof(*rec->files));
	for (size_t i = 0; i < a->n; i++) {
		const struct cctl_entry *e = &a->v[i];
		struct cctl_file *f;
		struct cctl_os_stat st;
		if (!*e->path || e->type == CCTL_ENTRY_DIR)
			continue;
		cctl_buf_reset(&path);
		cctl_buf_adds(&path, staging);
		cctl_buf_addpath(&path, e->path);
		if (e->type == CCTL_ENTRY_FILE)
			cctl_os_unblock(path.buf);
		if ((ret = cctl_os_stat(ctx, path.buf, &st)))
			break;
		f = &rec->files[rec->nfiles++];
		f->path = cctl_xstrdup(e->path);
		f->type = e->type;
		f->link = cctl_xstrdup(e->link);
		f->mtime_ns = st.mtime_ns;
		f->ctime_ns = st.ctime_ns;
		if (e->type == CCTL_ENTRY_HARDLINK) {
			const struct cctl_entry *t = cctl_archive_find(a, e->link);
			f->type = CCTL_ENTRY_FILE;
			f->size = st.size;
			if (t)
				memcpy(f->sha256, t->sha256, sizeof(f->sha256));
		} else if (e->type == CCTL_ENTRY_FILE) {
			f->size = e->size;
			memcpy(f->sha256, e->sha256, sizeof(f->sha256));
		}
		if (f->type == CCTL_ENTRY_FILE)
			rec->size += f->size;
		cctl__progress(ctx, CCTL_PHASE_RECORD, i + 1, a->n);
	}
	cctl_buf_release(&path);
	return ret;
}

/* ------------------------------------------------------------ identify */

/* A file named like a release must be that release: its size is checked
 * before any time goes into the hash. */
static int identify_claimed(struct cctl_ctx *ctx, const struct cctl_manifest *m,
			    struct cctl_install_job *job, uint64_t size)
{
	const struct cctl_release *c = cctl_manifest_find_name(m, job->name);
	for (size_t i = 0; c && i < m->n; i++)
		if (!strcmp(m->v[i].file_name, job->name) && m->v[i].size == size)
			c = &m->v[i];
	job->claimed = c;
	if (!c || c->size == size)
		return 0;
	cctl__error(ctx, CCTL_EMISMATCH,
		    "size mismatch for '%s': expected %llu bytes (%s), got %llu",
		    job->o->archive, (unsigned long long)c->size, c->source,
		    (unsigned long long)size);
	cctl__hint(ctx, "the download is incomplete or altered; download it "
			"again from NVIDIA");
	return CCTL_EMISMATCH;
}

static int hash_mismatch(struct cctl_ctx *ctx, const struct cctl_install_job *job)
{
	cctl__error(ctx, CCTL_EMISMATCH,
		    "sha256 mismatch for '%s': expected %s (%s), got %s",
		    job->o->archive, job->claimed->sha256, job->claimed->source,
		    job->sha256);
	cctl__hint(ctx, "the download is corrupt or altered; download it again "
			"from NVIDIA");
	return CCTL_EMISMATCH;
}

/* The scan reads the file, checks every entry and hashes it: the archive
 * identified is exactly the one checked.  A compressed tar that is likely
 * to be installed (named and sized as a release, or taken unverified) is
 * decompressed once, its files unpacked into a private folder in
 * versions/ as the scan reads them; any other is read twice, so that one
 * refused writes nothing. */
static int identify_scan(struct cctl_ctx *ctx, const struct cctl_root *r,
			 struct cctl__feed *feed, struct cctl_install_job *job)
{
	char *vdir = cctl_path_join(r->path, "versions", NULL);
	const char *sp = job->claimed || job->o->allow_unknown ? vdir : NULL;
	int ret = feed ? cctl__archive_scan_fed(ctx, feed, job->o->archive, sp,
						job->o->jobs, &job->a)
		       : cctl_archive_scan(ctx, job->fd, job->o->archive, sp,
					   job->o->jobs, &job->a);
	free(vdir);
	if (!ret) {
		memcpy(job->sha256, job->a.scan_sha256, sizeof(job->sha256));
		job->size = job->a.file_size;
		return 0;
	}
	/* a file named like a release that does not read as one is, first
	 * of all, not that release: say so with both hashes */
	if (job->claimed && job->fd >= 0 &&
	    !cctl_sha256_fd(NULL, job->fd, job->o->archive, job->sha256,
			    &job->size) &&
	    strcmp(job->sha256, job->claimed->sha256))
		return hash_mismatch(ctx, job);
	return ret;
}

/* Verified: the manifest says what it is. */
static int identify_release(struct cctl_ctx *ctx, struct cctl_install_job *job,
			    const char *header_version, struct cctl_install *rec)
{
	const struct cctl_release *match = job->match;
	rec->version = cctl_xstrdup(match->version);
	rec->cuda = match->cuda;
	rec->platform = cctl_xstrdup(match->platform);
	rec->verified = 1;
	rec->manifest = cctl_xstrdup(match->source);
	if (job->o->cuda && job->o->cuda != match->cuda)
		return cctl__error(ctx, CCTL_EUSAGE,
				   "'%s' is the cuda%d build of cuDNN %s, not "
				   "cuda%d",
				   job->o->archive, match->cuda, match->version,
				   job->o->cuda);
	if (header_version &&
	    !cctl_version_has_prefix(match->version, header_version))
		cctl__warn(ctx,
			   "'%s': include/cudnn_version.h says %s, the manifest "
			   "%s",
			   job->o->archive, header_version, match->version);
	return 0;
}

/* Unverified (--allow-unknown): the archive's own header and name say. */
static int identify_unknown(struct cctl_ctx *ctx, struct cctl_install_job *job,
			    const char *header_version, struct cctl_install *rec)
{
	const char *platform = detect_platform(&job->a);
	if (!header_version) {
		cctl__error(ctx, CCTL_EBADARCHIVE,
			    "cannot tell the cuDNN version of '%s': it has no "
			    "include/cudnn_version.h",
			    job->o->archive);
		cctl__hint(ctx, "use an archive as NVIDIA publishes it");
		return CCTL_EBADARCHIVE;
	}
	rec->version = cctl_xstrdup(header_version);
	rec->cuda = job->o->cuda ? job->o->cuda : cctl__cuda_from_name(job->name);
	if (!rec->cuda) {
		cctl__error(ctx, CCTL_EUSAGE,
			    "cannot tell which CUDA major '%s' was built for: "
			    "its name does not say",
			    job->o->archive);
		cctl__hint(ctx, "pass --cuda N (11, 12 or 13)");
		return CCTL_EUSAGE;
	}
	if (!platform) {
		cctl__error(ctx, CCTL_EBADARCHIVE,
			    "'%s' holds no cuDNN library (no bin/cudnn*.dll, no "
			    "lib/libcudnn*)",
			    job->o->archive);
		cctl__hint(ctx, "use an archive as NVIDIA publishes it");
		return CCTL_EBADARCHIVE;
	}
	rec->platform = cctl_xstrdup(platform);
	cctl__warn(ctx,
		   "'%s' is not a known NVIDIA archive; installing it unverified "
		   "as cuDNN %s for CUDA %d",
		   job->o->archive, rec->version, rec->cuda);
	return 0;
}

int cctl_install_identify(struct cctl_ctx *ctx, const struct cctl_root *r,
			  const struct cctl_manifest *m,
			  const struct cctl_install_opts *o,
			  struct cctl_install_job *job,
			  struct cctl_install_result *res)
{
	return cctl__install_identify_fed(ctx, r, m, o, NULL, job, res);
}

int cctl__install_identify_fed(struct cctl_ctx *ctx, const struct cctl_root *r,
			       const struct cctl_manifest *m,
			       const struct cctl_install_opts *o,
			       struct cctl__feed *feed,
			       struct cctl_install_job *job,
			       struct cctl_install_result *res)
{
	struct cctl_install *rec = &res->rec;
	struct cctl_os_stat st;
	char *header = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(job, 0, sizeof(*job));
	job->o = o;
	job->name = base_name(o->archive);
	job->fd = job->a.fd = job->a.copy_fd = -1;
	st.size = feed ? cctl__feed_size(feed) : 0;
	if ((!feed && ((ret = cctl_os_open_read(ctx, o->archive, &job->fd)) ||
		       (ret = cctl_os_stat(ctx, o->archive, &st)))) ||
	    (ret = identify_claimed(ctx, m, job, st.size)) ||
	    (ret = identify_scan(ctx, r, feed, job)))
		return ret;
	job->match = cctl_manifest_find_hash(m, job->size, job->sha256);
	if (!job->match && job->claimed)
		return hash_mismatch(ctx, job);
	if (!job->match && !o->allow_unknown) {
		cctl__error(ctx, CCTL_EUNKNOWN_ARCHIVE,
			    "'%s' (%llu bytes, sha256 %s) matches none of the "
			    "%zu known cuDNN archives",
			    o->archive, (unsigned long long)job->size,
			    job->sha256, m->n);
		cctl__hint(ctx, "for a newer release pass its manifest with "
				"--manifest redistrib_X.json; to install it "
				"unverified pass --allow-unknown");
		return CCTL_EUNKNOWN_ARCHIVE;
	}
	header = cctl_parse_version_header(job->a.version_h);
	ret = job->match ? identify_release(ctx, job, header, rec)
			 : identify_unknown(ctx, job, header, rec);
	free(header);
	if (ret)
		return ret;
	rec->id = cctl_xstrfmt("%s-cuda%d", rec->version, rec->cuda);
	rec->archive = cctl_xstrdup(job->name);
	memcpy(rec->archive_sha256, job->sha256, sizeof(job->sha256));
	res->strip_prefix = cctl_xstrdup(job->a.prefix);
	return 0;
}

/* --------------------------------------------------------------- check */

/* The version's folder exists: the same build is "already installed";
 * anything else there is a conflict. */
static int check_target(struct cctl_ctx *ctx, const struct cctl_root *r,
			struct cctl_install_job *job,
			struct cctl_install_result *res)
{
	struct cctl_install old;
	struct cctl_os_stat st;
	int ret;

	if ((ret = cctl_os_stat(ctx, job->final, &st)) || st.type == CCTL_OS_NONE)
		return ret;
	if (!cctl_record_read(NULL, job->final, &old) &&
	    !strcmp(old.archive_sha256, job->sha256)) {
		res->already = 1;
		cctl_install_release(&res->rec);
		res->rec = old;
		if (!(ret = cctl_store_active(ctx, r, &res->previous)))
			res->rec.active = res->previous &&
					  !strcmp(res->previous, res->rec.id);
		return ret;
	}
	if (old.id)
		cctl_install_release(&old);
	cctl__error(ctx, CCTL_EFAIL,
		    "'%s' already holds cuDNN %s from another archive; nothing "
		    "was changed",
		    job->final, res->rec.id);
	cctl__hint(ctx, "run cudnnctl uninstall %s first to replace it",
		   res->rec.id);
	return CCTL_EFAIL;
}

/* Every path must stay short, and the files must fit. */
static int check_room(struct cctl_ctx *ctx, const struct cctl_root *r,
		      const struct cctl_install_job *job, const char *id)
{
	const struct cctl_archive *a = &job->a;
	size_t root_len = strlen(r->path), longest;
	uint64_t avail;
	char need[32], have[32];
	int ret;

	longest = strlen("/versions/") + strlen(id) + 1 + a->longest_path;
	if (strlen(job->staging) - root_len + 1 + a->longest_path > longest)
		longest = strlen(job->staging) - root_len + 1 + a->longest_path;
	if ((ret = cctl_root_check(ctx, r->path, longest)) ||
	    (ret = cctl_os_free_space(ctx, r->path, &avail)))
		return ret;
	/* the files a tar.xz's scan unpacked are there already */
	avail += a->unpacked_size;
	if (avail >= a->total_size + SPACE_MARGIN)
		return 0;
	cctl_format_size(need, sizeof(need), a->total_size + SPACE_MARGIN);
	cctl_format_size(have, sizeof(have), avail);
	cctl__error(ctx, CCTL_ENOSPACE,
		    "not enough room in '%s' for cuDNN %s: it needs %s, %s are "
		    "free; nothing was written",
		    r->path, id, need, have);
	cctl__hint(ctx, "free some space or choose another root with --root");
	return CCTL_ENOSPACE;
}

int cctl_install_check(struct cctl_ctx *ctx, const struct cctl_root *r,
		       struct cctl_install_job *job,
		       struct cctl_install_result *res)
{
	const struct cctl_install *rec = &res->rec;
	const char *host = cctl_host_platform();
	char *leaf;
	int ret;

	if (strcmp(rec->platform, host)) {
		cctl__error(ctx, CCTL_EPLATFORM,
			    "'%s' is the %s build of cuDNN %s; this machine "
			    "needs %s",
			    job->o->archive, rec->platform, rec->version, host);
		if (cctl_platform_find(rec->platform) &&
		    cctl_platform_find(rec->platform)->windows ==
			    cctl_platform_host()->windows)
			cctl__hint(ctx, "download the %s archive instead, or pass "
					"--platform %s if this machine is that",
				   host, rec->platform);
		else
			cctl__hint(ctx, "download the %s archive instead", host);
		return CCTL_EPLATFORM;
	}
	if (!cctl_id_valid(rec->id)) {
		cctl__error(ctx, CCTL_EMANIFEST,
			    "'%s' would be installed as '%.200s', which is not "
			    "a version id (<version>-cuda<N>): refused",
			    job->o->archive, rec->id);
		cctl__hint(ctx, "use NVIDIA's own redistrib_*.json for this "
				"release; nothing was installed");
		return CCTL_EMANIFEST;
	}
	job->final = cctl_path_join(r->path, "versions", rec->id, NULL);
	{
		char *versions = cctl_path_join(r->path, "versions", NULL);
		ret = cctl__check_within(ctx, versions, job->final,
					 "install folder");
		free(versions);
		if (ret)
			return ret;
	}
	leaf = cctl__unique_leaf(".staging-");
	job->staging = cctl_path_join(r->path, "versions", leaf, NULL);
	free(leaf);
	if ((ret = check_target(ctx, r, job, res)) || res->already)
		return ret;
	if ((ret = check_libraries(ctx, &job->a, rec->platform,
				   atoi(rec->version))))
		return ret;
	return check_room(ctx, r, job, rec->id);
}

/* --------------------------------------------------------------- place */

/* The folder of the staging folder: versions/, where private copies go. */
static char *versions_dir(const char *staging)
{
	char *dir = cctl_xstrdup(staging);
	char *cut = strrchr(dir, '/');
	char *back = strrchr(dir, '\\');
	if (back && (!cut || back > cut))
		cut = back;
	if (cut)
		*cut = '\0';
	return dir;
}

/* Extracts into a fresh staging folder exactly what was hashed.  A file
 * that someone else could change under the extraction (not guarded: not
 * ours, open for writing, no leases here) is copied first into a private
 * file, hashed again on the way; one whose guard broke during the
 * extraction (opened for writing) is extracted once more, from such a
 * copy: what it held meanwhile cannot be proven, even when it hashes the
 * same again now. */
static int extract_bound(struct cctl_ctx *ctx, struct cctl_install_job *job)
{
	char *dir = versions_dir(job->staging);
	int ret = 0;
	for (int pass = 0; !ret && pass < 2; pass++) {
		if (!cctl_archive_trusted(&job->a) &&
		    (ret = cctl_archive_seal(ctx, &job->a, dir)))
			break;
		if ((ret = cctl_os_rmtree(ctx, job->staging)) ||
		    (ret = cctl_os_mkdir(ctx, job->staging)))
			break;
		job->staged = 1;
		if ((ret = cctl_archive_extract(ctx, &job->a, job->staging)) ||
		    !job->a.guard_lost)
			break;
		cctl__warn(ctx, "'%s' was opened for writing by another program "
				"while it was being extracted; extracting it again "
				"from a private copy",
			   job->o->archive);
	}
	free(dir);
	return ret;
}

int cctl_install_place(struct cctl_ctx *ctx, struct cctl_install_job *job,
		       struct cctl_install_result *res)
{
	struct cctl_install *rec = &res->rec;
	char when[32];
	int ret;

	if ((ret = extract_bound(ctx, job)))
		return ret;
	/* what was extracted is what was checked and identified: the file
	 * hashed the same while it was extracted */
	if (strcmp(job->a.extract_sha256, job->sha256)) {
		cctl__error(ctx, CCTL_EBADARCHIVE,
			    "'%s' changed while it was being read (sha256 %s, "
			    "then %s); nothing was installed",
			    job->o->archive, job->sha256, job->a.extract_sha256);
		cctl__hint(ctx, "make sure nothing writes to the archive (a "
				"download still running?), then run the command "
				"again");
		return CCTL_EBADARCHIVE;
	}
	cctl_os_utc_now(when);
	rec->installed_at = cctl_xstrdup(when);
	if ((ret = build_record(ctx, &job->a, job->staging, rec)) ||
	    (ret = cctl__write_build_files(ctx, job->staging, rec)) ||
	    (ret = cctl_record_write(ctx, job->staging, rec)) ||
	    (ret = cctl_os_rename(ctx, job->staging, job->final)))
		return ret;
	job->staged = 0;
	job->placed = 1;
	return 0;
}

/* ------------------------------------------------------------ activate */

int cctl_install_activate(struct cctl_ctx *ctx, const struct cctl_root *r,
			  struct cctl_install_job *job,
			  struct cctl_install_result *res)
{
	int ret;
	if ((ret = cctl_store_active(ctx, r, &res->previous)))
		return ret;
	if (!res->previous || !job->o->no_activate) {
		if ((ret = cctl_activate(ctx, r, res->rec.id, job->o->act_flags)))
			return ret;
		res->activated = 1;
	}
	res->rec.active = res->activated;
	job->placed = 0; /* it stays */
	return 0;
}

void cctl_install_job_release(struct cctl_install_job *job, int failed)
{
	/* leave the root as it was */
	if (failed && job->staged)
		cctl_os_rmtree(NULL, job->staging);
	else if (failed && job->placed)
		cctl_os_rmtree(NULL, job->final);
	cctl_archive_release(&job->a);
	cctl_os_close(job->fd);
	free(job->staging);
	free(job->final);
	memset(job, 0, sizeof(*job));
	job->fd = -1;
}

int cctl__install_refile(struct cctl_ctx *ctx, struct cctl_install_job *job)
{
	struct cctl_archive *a = &job->a;
	int ret;
	if ((ret = cctl_os_open_read(ctx, job->o->archive, &job->fd)))
		return ret;
	a->fd = job->fd;
	if (a->unpacked)
		return 0; /* the scan wrote the files as it hashed the bytes */
	/* the scan hashed the bytes as they came, not this file: it is
	 * hashed again beside the extraction, with writers kept off it
	 * from now on; or, when they cannot be, copied (extract_bound) */
	if ((a->guard = cctl_os_guard_begin(job->fd, job->o->archive)))
		a->rehash = 1;
	return 0;
}

int cctl__install_finish(struct cctl_ctx *ctx, struct cctl_root *r,
			 struct cctl_install_job *job,
			 struct cctl_install_result *res, int ret)
{
	const struct cctl_install_opts *o = job->o;
	if (!ret && !(ret = cctl_install_check(ctx, r, job, res)) &&
	    !res->already && !(ret = cctl_install_place(ctx, job, res)))
		ret = cctl_install_activate(ctx, r, job, res);
	/* already there and active (or nothing is): activate again, which
	 * changes nothing when all is in place and finishes an activation a
	 * killed run left half-done (one profile written, not the other) */
	if (!ret && res->already && !(o->no_activate && res->previous) &&
	    (!res->previous || res->rec.active) &&
	    !(ret = cctl_activate(ctx, r, res->rec.id, o->act_flags)))
		res->rec.active = 1;
	cctl_install_job_release(job, ret != 0);
	return ret;
}

int cctl_install_archive(struct cctl_ctx *ctx, struct cctl_root *r,
			 const struct cctl_manifest *m,
			 const struct cctl_install_opts *o,
			 struct cctl_install_result *res)
{
	struct cctl_install_job job;
	int ret = cctl_install_identify(ctx, r, m, o, &job, res);
	return cctl__install_finish(ctx, r, &job, res, ret);
}

void cctl_install_result_release(struct cctl_install_result *res)
{
	cctl_install_release(&res->rec);
	free(res->previous);
	free(res->strip_prefix);
	memset(res, 0, sizeof(*res));
}
