/*
 * The install pipeline: identify the archive by size and SHA-256, scan it,
 * check the library set, extract into a staging folder inside the root,
 * record every file, rename into versions/<id>, activate.  Any failure
 * removes the staging folder and leaves the root as it was.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
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

static void human_size(char *out, size_t n, uint64_t bytes)
{
	if (bytes >= (1u << 20))
		snprintf(out, n, "%.1f MB", (double)bytes / (1 << 20));
	else
		snprintf(out, n, "%llu bytes", (unsigned long long)bytes);
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

int cctl_install_archive(struct cctl_ctx *ctx, struct cctl_root *r,
			 const struct cctl_manifest *m,
			 const struct cctl_install_opts *o,
			 struct cctl_install_result *res)
{
	const char *name = base_name(o->archive);
	const struct cctl_release *claimed, *match;
	struct cctl_archive a;
	struct cctl_install *rec = &res->rec;
	struct cctl_buf staging = CCTL_BUF_INIT, final = CCTL_BUF_INIT;
	struct cctl_os_stat st;
	char sha[65], when[32], *header_version = NULL, *spool_dir;
	uint64_t size = 0, avail;
	size_t longest;
	int fd = -1, ret, staged = 0, placed = 0;

	memset(res, 0, sizeof(*res));
	memset(&a, 0, sizeof(a));
	a.fd = a.spool_fd = -1;
	if ((ret = cctl_os_open_read(ctx, o->archive, &fd)))
		goto out;
	if ((ret = cctl_os_stat(ctx, o->archive, &st)))
		goto out;

	/* a file named like a release must be that release: check its size
	 * before spending time on the hash */
	claimed = cctl_manifest_find_name(m, name);
	for (size_t i = 0; claimed && i < m->n; i++)
		if (!strcmp(m->v[i].file_name, name) && m->v[i].size == st.size)
			claimed = &m->v[i];
	if (claimed && claimed->size != st.size) {
		ret = cctl__error(ctx, CCTL_EMISMATCH,
				  "size mismatch for '%s': expected %llu bytes "
				  "(%s), got %llu",
				  o->archive, (unsigned long long)claimed->size,
				  claimed->source, (unsigned long long)st.size);
		cctl__hint(ctx, "the download is incomplete or altered; "
				"download it again from NVIDIA");
		goto out;
	}
	/* the scan reads the file, checks every entry and hashes it: the
	 * archive identified below is exactly the one checked.  A compressed
	 * tar that is likely to be installed (named and sized as a release,
	 * or taken unverified) is decompressed once, into a temporary file in
	 * versions/; any other is read twice, so that one refused writes
	 * nothing */
	spool_dir = cctl_path_join(r->path, "versions", NULL);
	ret = cctl_archive_scan(ctx, fd, o->archive,
				claimed || o->allow_unknown ? spool_dir : NULL,
				&a);
	free(spool_dir);
	if (ret) {
		/* a file named like a release that does not read as one is,
		 * first of all, not that release: say so with both hashes */
		struct cctl_ctx quiet;
		cctl_ctx_init(&quiet);
		if (claimed && !cctl_sha256_fd(&quiet, fd, o->archive, sha, &size) &&
		    strcmp(sha, claimed->sha256))
			goto mismatch;
		goto out;
	}
	memcpy(sha, a.scan_sha256, sizeof(sha));
	size = a.file_size;
	match = cctl_manifest_find_hash(m, size, sha);
	if (!match && claimed) {
mismatch:
		ret = cctl__error(ctx, CCTL_EMISMATCH,
				  "sha256 mismatch for '%s': expected %s (%s), "
				  "got %s",
				  o->archive, claimed->sha256, claimed->source,
				  sha);
		cctl__hint(ctx, "the download is corrupt or altered; "
				"download it again from NVIDIA");
		goto out;
	}
	if (!match && !o->allow_unknown) {
		ret = cctl__error(ctx, CCTL_EUNKNOWN_ARCHIVE,
				  "'%s' (%llu bytes, sha256 %s) matches none of "
				  "the %zu known cuDNN archives",
				  o->archive, (unsigned long long)size, sha, m->n);
		cctl__hint(ctx, "for a newer release pass its manifest with "
				"--manifest redistrib_X.json; to install it "
				"unverified pass --allow-unknown");
		goto out;
	}

	header_version = cctl_parse_version_header(a.version_h);

	if (match) {
		rec->version = cctl_xstrdup(match->version);
		rec->cuda = match->cuda;
		rec->platform = cctl_xstrdup(match->platform);
		rec->verified = 1;
		rec->manifest = cctl_xstrdup(match->source);
		if (o->cuda && o->cuda != match->cuda) {
			ret = cctl__error(ctx, CCTL_EUSAGE,
					  "'%s' is the cuda%d build of cuDNN %s, "
					  "not cuda%d",
					  o->archive, match->cuda, match->version,
					  o->cuda);
			goto out;
		}
		if (header_version &&
		    !cctl_version_has_prefix(match->version, header_version))
			cctl__warn(ctx,
				   "'%s': include/cudnn_version.h says %s, the "
				   "manifest %s",
				   o->archive, header_version, match->version);
	} else {
		const char *platform = detect_platform(&a);
		if (!header_version) {
			ret = cctl__error(ctx, CCTL_EBADARCHIVE,
					  "cannot tell the cuDNN version of '%s': "
					  "it has no include/cudnn_version.h",
					  o->archive);
			cctl__hint(ctx, "use an archive as NVIDIA publishes it");
			goto out;
		}
		rec->version = cctl_xstrdup(header_version);
		rec->cuda = o->cuda ? o->cuda : cctl__cuda_from_name(name);
		if (!rec->cuda) {
			ret = cctl__error(ctx, CCTL_EUSAGE,
					  "cannot tell which CUDA major '%s' was "
					  "built for: its name does not say",
					  o->archive);
			cctl__hint(ctx, "pass --cuda N (11, 12 or 13)");
			goto out;
		}
		if (!platform) {
			ret = cctl__error(ctx, CCTL_EBADARCHIVE,
					  "'%s' holds no cuDNN library (no "
					  "bin/cudnn*.dll, no lib/libcudnn*)",
					  o->archive);
			cctl__hint(ctx, "use an archive as NVIDIA publishes it");
			goto out;
		}
		rec->platform = cctl_xstrdup(platform);
		cctl__warn(ctx,
			   "'%s' is not a known NVIDIA archive; installing it "
			   "unverified as cuDNN %s for CUDA %d",
			   o->archive, rec->version, rec->cuda);
	}
	if (strcmp(rec->platform, cctl_host_platform())) {
		ret = cctl__error(ctx, CCTL_EPLATFORM,
				  "'%s' is the %s build of cuDNN %s; this machine "
				  "needs %s",
				  o->archive, rec->platform, rec->version,
				  cctl_host_platform());
		cctl__hint(ctx, "download the %s archive instead",
			   cctl_host_platform());
		goto out;
	}
	rec->id = cctl_xstrfmt("%s-cuda%d", rec->version, rec->cuda);
	rec->archive = cctl_xstrdup(name);
	memcpy(rec->archive_sha256, sha, sizeof(sha));
	res->strip_prefix = cctl_xstrdup(a.prefix);

	cctl_buf_adds(&final, r->path);
	cctl_buf_addpath(&final, "versions");
	cctl_buf_addpath(&final, rec->id);
	if ((ret = cctl_os_stat(ctx, final.buf, &st)))
		goto out;
	if (st.type != CCTL_OS_NONE) {
		struct cctl_install old;
		struct cctl_ctx quiet;
		cctl_ctx_init(&quiet);
		if (!cctl_record_read(&quiet, final.buf, &old) &&
		    !strcmp(old.archive_sha256, sha)) {
			res->already = 1;
			cctl_install_release(rec);
			*rec = old;
			if (!(ret = cctl_store_active(ctx, r, &res->previous)))
				rec->active = res->previous &&
					      !strcmp(res->previous, rec->id);
			goto out;
		}
		if (old.id)
			cctl_install_release(&old);
		ret = cctl__error(ctx, CCTL_EFAIL,
				  "'%s' already holds cuDNN %s from another "
				  "archive; nothing was changed",
				  final.buf, rec->id);
		cctl__hint(ctx, "run cudnnctl uninstall %s first to replace it",
			   rec->id);
		goto out;
	}

	if ((ret = check_libraries(ctx, &a, rec->platform,
				   atoi(rec->version))))
		goto out;

	cctl_buf_adds(&staging, r->path);
	cctl_buf_addpath(&staging, "versions");
	cctl_buf_addpath(&staging, "");
	cctl_buf_addf(&staging, ".staging-%ld", cctl_os_pid());
	longest = strlen("/versions/") + strlen(rec->id) + 1 + a.longest_path;
	if (staging.len - strlen(r->path) + 1 + a.longest_path > longest)
		longest = staging.len - strlen(r->path) + 1 + a.longest_path;
	if ((ret = cctl_root_check(ctx, r->path, longest)))
		goto out;
	if ((ret = cctl_os_free_space(ctx, r->path, &avail)))
		goto out;
	if (avail < a.total_size + SPACE_MARGIN) {
		/* the decompressed copy of a tar.xz takes room until the end */
		char need[32], have[32];
		human_size(need, sizeof(need),
			   a.total_size + a.spool_size + SPACE_MARGIN);
		human_size(have, sizeof(have), avail + a.spool_size);
		ret = cctl__error(ctx, CCTL_ENOSPACE,
				  "not enough room in '%s' for cuDNN %s: it "
				  "needs %s, %s are free; nothing was written",
				  r->path, rec->id, need, have);
		cctl__hint(ctx, "free some space or choose another root with "
				"--root");
		goto out;
	}

	if ((ret = cctl_os_rmtree(ctx, staging.buf)) ||
	    (ret = cctl_os_mkdir(ctx, staging.buf)))
		goto out;
	staged = 1;
	if ((ret = cctl_archive_extract(ctx, &a, staging.buf)))
		goto out;
	/* what was extracted is what was checked and identified: the file
	 * hashed the same while it was extracted */
	if (strcmp(a.extract_sha256, sha)) {
		ret = cctl__error(ctx, CCTL_EBADARCHIVE,
				  "'%s' changed while it was being read (sha256 "
				  "%s, then %s); nothing was installed",
				  o->archive, sha, a.extract_sha256);
		cctl__hint(ctx, "make sure nothing writes to the archive (a "
				"download still running?), then run the command "
				"again");
		goto out;
	}
	cctl_os_utc_now(when);
	rec->installed_at = cctl_xstrdup(when);
	if ((ret = build_record(ctx, &a, staging.buf, rec)) ||
	    (ret = cctl_record_write(ctx, staging.buf, rec)))
		goto out;
	if ((ret = cctl_os_rename(ctx, staging.buf, final.buf)))
		goto out;
	staged = 0;
	placed = 1;

	if ((ret = cctl_store_active(ctx, r, &res->previous)))
		goto out;
	if (!res->previous || !o->no_activate) {
		if ((ret = cctl_activate(ctx, r, rec->id, o->act_flags)))
			goto out;
		res->activated = 1;
	}
	rec->active = res->activated;
	placed = 0;
out:
	if (ret && (staged || placed)) {
		/* leave the root as it was */
		struct cctl_ctx ignore;
		cctl_ctx_init(&ignore);
		cctl_os_rmtree(&ignore, staged ? staging.buf : final.buf);
	}
	free(header_version);
	cctl_archive_release(&a);
	cctl_os_close(fd);
	cctl_buf_release(&staging);
	cctl_buf_release(&final);
	return ret;
}

void cctl_install_result_release(struct cctl_install_result *res)
{
	cctl_install_release(&res->rec);
	free(res->previous);
	free(res->strip_prefix);
	memset(res, 0, sizeof(*res));
}
