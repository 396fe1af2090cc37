/*
 * The files a build finds an install by, written into the staging folder
 * at install time from the record (install.c calls it before the record
 * is written, so verify checks them like the archive's own files):
 *
 *   lib/cmake/CUDNN/CUDNNConfig.cmake         find_package(CUDNN CONFIG):
 *   lib/cmake/CUDNN/CUDNNConfigVersion.cmake  CUDNN::cudnn, CUDNN_VERSION
 *   lib/pkgconfig/cudnn.pc                    pkg-config cudnn
 *
 * Every path in them is relative to the file itself, so they hold through
 * <root>/current as through versions/<id>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

#define CMAKE_DIR "lib/cmake/CUDNN"
#define PC_DIR "lib/pkgconfig"

/* The record's file at dir/name (dir NULL or "": the top), or NULL. */
static const char *rec_file(const struct cctl_install *rec, const char *dir,
			    const char *name)
{
	size_t dl = dir ? strlen(dir) : 0;
	for (size_t i = 0; i < rec->nfiles; i++) {
		const char *p = rec->files[i].path;
		if (rec->files[i].type == CCTL_ENTRY_DIR)
			continue;
		if (dl && (strncmp(p, dir, dl) || p[dl] != '/'))
			continue;
		if (!strcmp(p + (dl ? dl + 1 : 0), name))
			return p;
	}
	return NULL;
}

/* The first of the folders (ending with NULL) that holds name. */
static const char *rec_find(const struct cctl_install *rec,
			    const char *const *dirs, const char *name)
{
	for (; *dirs; dirs++) {
		const char *p = rec_file(rec, *dirs, name);
		if (p)
			return p;
	}
	return NULL;
}

struct build_libs {
	const char *main;   /* the main library: lib/libcudnn.so.9,
			       bin/x64/cudnn64_9.dll */
	const char *implib; /* Windows: lib/x64/cudnn.lib, or NULL */
	const char *dev;    /* Linux: lib/libcudnn.so, or NULL */
};

static int find_libs(const struct cctl_platform *p,
		     const struct cctl_install *rec, struct build_libs *l)
{
	const char *const *names = cctl_platform_libraries(p, atoi(rec->version));
	const char *bins[] = { p->lib_alt, p->lib_dir, NULL };
	memset(l, 0, sizeof(*l));
	if (!names || !(l->main = rec_find(rec, p->lib_alt ? bins : bins + 1,
					   names[0])))
		return -1;
	if (p->windows) {
		char alt[32];
		const char *libs[] = { alt, "lib", NULL };
		snprintf(alt, sizeof(alt), "lib/%s", p->arch);
		l->implib = rec_find(rec, libs, "cudnn.lib");
	} else {
		l->dev = rec_file(rec, "lib", "libcudnn.so");
	}
	return 0;
}

static void cmake_config(struct cctl_buf *b, const struct cctl_platform *p,
			 const struct cctl_install *rec,
			 const struct build_libs *l)
{
	cctl_buf_addf(b,
		      "# Written by cudnnctl for cuDNN %s (CUDA %d, %s) from "
		      "its install record.\n"
		      "# find_package(CUDNN CONFIG) gives the imported target "
		      "CUDNN::cudnn.\n"
		      "# Paths are relative to this file "
		      "(<install>/" CMAKE_DIR ").\n",
		      rec->version, rec->cuda, rec->platform);
	cctl_buf_adds(b, "get_filename_component(_cudnn_prefix "
			 "\"${CMAKE_CURRENT_LIST_DIR}/../../..\" ABSOLUTE)\n");
	cctl_buf_addf(b, "set(CUDNN_VERSION \"%s\")\n", rec->version);
	cctl_buf_addf(b, "set(CUDNN_CUDA_MAJOR %d)\n", rec->cuda);
	cctl_buf_adds(b, "set(CUDNN_INCLUDE_DIRS \"${_cudnn_prefix}/include\")\n"
			 "if(NOT TARGET CUDNN::cudnn)\n"
			 "  add_library(CUDNN::cudnn SHARED IMPORTED)\n"
			 "  set_target_properties(CUDNN::cudnn PROPERTIES\n"
			 "    INTERFACE_INCLUDE_DIRECTORIES "
			 "\"${_cudnn_prefix}/include\"\n");
	cctl_buf_addf(b, "    IMPORTED_LOCATION \"${_cudnn_prefix}/%s\"", l->main);
	if (l->implib)
		cctl_buf_addf(b, "\n    IMPORTED_IMPLIB \"${_cudnn_prefix}/%s\"",
			      l->implib);
	if (!p->windows)
		cctl_buf_addf(b, "\n    IMPORTED_SONAME \"%s\"",
			      strrchr(l->main, '/') + 1);
	cctl_buf_adds(b, ")\nendif()\n"
			 "set(CUDNN_LIBRARIES CUDNN::cudnn)\n"
			 "set(CUDNN_FOUND TRUE)\n"
			 "unset(_cudnn_prefix)\n");
}

/* As CMake's SameMajorVersion: 9.10 finds 9.19.0.56, 8 and 10 do not; a
 * range (CMake 3.19) is honoured; a 32-bit build is unsuitable. */
static void cmake_version(struct cctl_buf *b, const struct cctl_install *rec)
{
	cctl_buf_addf(b,
		      "# Written by cudnnctl for cuDNN %s: which "
		      "find_package(CUDNN VERSION) requests it meets.\n"
		      "set(PACKAGE_VERSION \"%s\")\n"
		      "set(_cudnn_major \"%d\")\n",
		      rec->version, rec->version, atoi(rec->version));
	cctl_buf_adds(
		b,
		"set(PACKAGE_VERSION_COMPATIBLE FALSE)\n"
		"if(PACKAGE_FIND_VERSION_RANGE)\n"
		"  if(NOT PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MIN "
		"AND\n"
		"     ((PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL \"INCLUDE\" AND\n"
		"       NOT PACKAGE_VERSION VERSION_GREATER "
		"PACKAGE_FIND_VERSION_MAX) OR\n"
		"      (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL \"EXCLUDE\" AND\n"
		"       PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MAX)))\n"
		"    set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
		"  endif()\n"
		"elseif(NOT PACKAGE_FIND_VERSION)\n"
		"  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
		"elseif(PACKAGE_FIND_VERSION_MAJOR STREQUAL _cudnn_major AND\n"
		"       NOT PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)\n"
		"  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
		"  if(PACKAGE_VERSION VERSION_EQUAL PACKAGE_FIND_VERSION)\n"
		"    set(PACKAGE_VERSION_EXACT TRUE)\n"
		"  endif()\n"
		"endif()\n"
		"if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P STREQUAL "
		"\"8\")\n"
		"  set(PACKAGE_VERSION \"${PACKAGE_VERSION} (64-bit)\")\n"
		"  set(PACKAGE_VERSION_UNSUITABLE TRUE)\n"
		"endif()\n"
		"unset(_cudnn_major)\n");
}

static void pkg_config(struct cctl_buf *b, const struct cctl_platform *p,
		       const struct cctl_install *rec,
		       const struct build_libs *l)
{
	const char *link = p->windows ? l->implib : l->dev ? l->dev : l->main;
	size_t dir = strrchr(link, '/') - link;
	cctl_buf_addf(b,
		      "# Written by cudnnctl for cuDNN %s (CUDA %d, %s); paths "
		      "relative to this file.\n"
		      "prefix=${pcfiledir}/../..\n"
		      "includedir=${prefix}/include\n"
		      "libdir=${prefix}/%.*s\n\n"
		      "Name: cuDNN\n"
		      "Description: NVIDIA CUDA Deep Neural Network library "
		      "(installed by cudnnctl)\n"
		      "Version: %s\n"
		      "Cflags: -I${includedir}\n",
		      rec->version, rec->cuda, rec->platform, (int)dir, link,
		      rec->version);
	if (p->windows || l->dev)
		cctl_buf_adds(b, "Libs: -L${libdir} -lcudnn\n");
	else /* no libcudnn.so link: name the library itself */
		cctl_buf_addf(b, "Libs: -L${libdir} -l:%s\n", link + dir + 1);
}

/* An archive entry (a file or a link: folders are not in the record) at
 * path or at a folder above it: writing there would replace it or follow
 * a link out of the install. */
static int taken(const struct cctl_install *rec, const char *path)
{
	for (size_t i = 0; i < rec->nfiles; i++) {
		const char *f = rec->files[i].path;
		size_t n = strlen(f);
		if (!strncmp(path, f, n) && (!path[n] || path[n] == '/'))
			return 1;
	}
	return 0;
}

static int write_one(struct cctl_ctx *ctx, const char *staging,
		     struct cctl_install *rec, const char *dir,
		     const char *name, const struct cctl_buf *text)
{
	char *rel = cctl_xstrfmt("%s/%s", dir, name);
	char *folder, *path;
	struct cctl_os_stat st;
	struct cctl_file *f;
	struct cctl_sha256 *h;
	int ret;

	if (taken(rec, rel)) { /* the archive's own, kept as it is */
		free(rel);
		return 0;
	}
	folder = cctl_path_join(staging, dir, NULL);
	path = cctl_path_join(staging, rel, NULL);
	cctl_os_native_path(folder);
	cctl_os_native_path(path);
	if ((ret = cctl__check_within(ctx, staging, path, "build file")) ||
	    (ret = cctl_os_mkdirs(ctx, folder)) ||
	    (ret = cctl_os_write_file_atomic(ctx, path, text->buf, text->len)) ||
	    (ret = cctl_os_stat(ctx, path, &st)))
		goto out;
	rec->files = cctl_xrealloc(rec->files,
				   (rec->nfiles + 1) * sizeof(*rec->files));
	f = &rec->files[rec->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = rel;
	rel = NULL;
	f->type = CCTL_ENTRY_FILE;
	f->size = text->len;
	f->mtime_ns = st.mtime_ns;
	f->ctime_ns = st.ctime_ns;
	h = cctl_sha256_new();
	cctl_sha256_update(h, text->buf, text->len);
	cctl_sha256_final(h, f->sha256);
	rec->size += f->size;
out:
	free(rel);
	free(folder);
	free(path);
	return ret;
}

int cctl__write_build_files(struct cctl_ctx *ctx, const char *staging,
			    struct cctl_install *rec)
{
	const struct cctl_platform *p = cctl_platform_find(rec->platform);
	struct cctl_buf text = CCTL_BUF_INIT;
	struct build_libs l;
	int ret = 0;

	/* no main library where the platform keeps it (install.c refuses
	 * such an archive before this): nothing a build could link */
	if (!p || find_libs(p, rec, &l))
		return 0;
	/* an archive that brings its own keeps them (write_one keeps any
	 * file of the archive's) */
	if (!taken(rec, CMAKE_DIR "/CUDNNConfig.cmake") &&
	    !taken(rec, CMAKE_DIR "/CUDNNConfigVersion.cmake")) {
		cmake_config(&text, p, rec, &l);
		ret = write_one(ctx, staging, rec, CMAKE_DIR,
				"CUDNNConfig.cmake", &text);
		cctl_buf_reset(&text);
		cmake_version(&text, rec);
		if (!ret)
			ret = write_one(ctx, staging, rec, CMAKE_DIR,
					"CUDNNConfigVersion.cmake", &text);
	}
	if (!ret && (!p->windows || l.implib)) {
		cctl_buf_reset(&text);
		pkg_config(&text, p, rec, &l);
		ret = write_one(ctx, staging, rec, PC_DIR, "cudnn.pc", &text);
	}
	cctl_buf_release(&text);
	return ret;
}
