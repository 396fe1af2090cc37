/* What fetch.c, mirror.c, cache.c and acquire.c share; not part of the
 * API. */
#ifndef CUDNNCTL_FETCH_H
#define CUDNNCTL_FETCH_H

#include "cudnnctl/cudnnctl.h"

/* The mirror an operation reads, chosen once from the options (--mirror,
 * else CUDNNCTL_MIRROR, else NVIDIA's) by the public entry point
 * (cctl_install_version, cctl_mirror_sync, ...) and passed down to every
 * part of it: a folder (or a file:// URL) or an http:// or https:// URL.
 * Every read of the mirror goes through it: whether the mirror is a URL
 * is decided in cctl__source_open alone. */
enum cctl__source_kind { CCTL__SRC_FOLDER, CCTL__SRC_HTTP, CCTL__SRC_HTTPS };
struct cctl__source {
	const char *name; /* the mirror as given, for messages */
	enum cctl__source_kind kind;
	char *root;       /* the folder, or the URL with a trailing '/' */
};
void cctl__source_open(struct cctl__source *s, const struct cctl_fetch_opts *o);
void cctl__source_close(struct cctl__source *s);
/* The URL or path of rel (a manifest's relative_path, an index) on the
 * mirror, checked to stay under its root (free()); NULL after an error. */
char *cctl__source_path(struct cctl_ctx *ctx, const struct cctl__source *s,
			const char *rel);
/* Seconds to wait for a connection (stall 0) or for the next byte
 * (stall 1): the options', else $CUDNNCTL_TIMEOUT, else 30. */
int cctl__fetch_timeout(const struct cctl_fetch_opts *o, int stall);
/* A small file of the mirror (an index page, a manifest) into out, at
 * most max bytes. */
int cctl__source_get(struct cctl_ctx *ctx, const struct cctl__source *s,
		     const struct cctl_fetch_opts *o, const char *rel, size_t max,
		     struct cctl_buf *out);

/* The pace of one transfer: a server that sends less than
 * CCTL__MIN_RATE bytes a second, over any stretch of stall_s seconds,
 * or has not finished by the deadline, is given up on.  (The OS layer's
 * own timer catches only a transfer with no byte at all: a trickle of a
 * few bytes a second would hold it for ever.) */
#define CCTL__MIN_RATE 1024
struct cctl__pace {
	const char *url;
	int stall_s;
	double window_ms;   /* when the stretch being measured began */
	uint64_t window_bytes;
	double deadline_ms; /* 0: none */
	int deadline_s;
};
void cctl__pace_begin(struct cctl__pace *p, const char *url, int stall_s,
		      int deadline_s);
/* Counts len more bytes: 0, or CCTL_ENETWORK (the error set) when the
 * transfer is too slow or past its deadline. */
int cctl__pace_check(struct cctl_ctx *ctx, struct cctl__pace *p, size_t len);

/* One file of a download, hashed as it is written (fetch.c): NAME.part,
 * which becomes the archive, or one range of a download over several
 * connections, NAME.<START>.part (fetch-ranges.c), which is not hashed:
 * its bytes are hashed when they are appended to NAME.part in order. */
struct cctl__ranges;
struct cctl__feed;
struct cctl__part {
	struct cctl_ctx *ctx;
	const char *path;      /* the file */
	int fd;
	struct cctl_sha256 *h; /* NULL for a range */
	int ranged;            /* a range: no hash, appended later */
	uint64_t base;         /* the archive's offset of the file's byte 0 */
	uint64_t end;          /* one past the last byte asked for; 0: all */
	uint64_t have;         /* bytes in the file (and in h) */
	uint64_t total;        /* the most the file may hold */
	uint64_t size;         /* the manifest's size of the archive */
	uint64_t received;     /* bytes received by this process */
	int started;           /* a response came this attempt */
	int status;            /* its HTTP status */
	int restarts;          /* a server that ignored the range */
	int norange;           /* the server does not honour Range */
	int failed;            /* a local error (not the network's) */
	const char *url;       /* this attempt's */
	int stall_s;
	struct cctl__pace pace;
	struct cctl__ranges *ranges; /* the download it is part of, or NULL */
	struct cctl__feed *feed;     /* told of each byte written, or NULL */
};
/* Opens the part: a file left by an earlier try is taken up (hashed, for
 * one that is), else a new one is made. */
int cctl__part_open(struct cctl__part *p);
/* Downloads url into the part from base + have on, resuming and
 * retrying. */
int cctl__part_download(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			const char *url, struct cctl__part *p,
			struct cctl_fetch_result *res);
/* Closes the part, and deletes it when its bytes are wrong, when the user
 * stopped the command, or when it is empty. */
void cctl__part_abandon(struct cctl__part *p, int ret);

/* cctl_fetch_archive from the source the operation chose, telling feed
 * (feed.h) of the bytes as they are written, for an install that reads
 * them as they come; feed may be NULL.  The caller ends the feed. */
int cctl__fetch_from(struct cctl_ctx *ctx, const struct cctl__source *mirror,
		     const struct cctl_fetch_opts *o,
		     const struct cctl_release *r, int check_hash,
		     struct cctl_fetch_result *res, struct cctl__feed *feed);
/* cctl_manifests_update from the source the operation chose. */
int cctl__manifests_update_from(struct cctl_ctx *ctx,
				const struct cctl__source *mirror,
				const struct cctl_fetch_opts *o,
				struct cctl_manifest *m, size_t *added,
				size_t *refused);

/* fetch-ranges.c: the download of p (NAME.part, opened) over several
 * connections at once, when the archive is large enough and the server
 * honours Range.  *handled 0: nothing was done (one connection it is);
 * else the result, p holding the whole archive, hashed, on success. */
int cctl__ranges_fetch(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		       const char *url, const char *archive,
		       struct cctl__part *p, struct cctl_fetch_result *res,
		       int *handled);
/* Deletes the range files an earlier run left for archive (NAME.part is
 * whole: what they hold is in it). */
void cctl__ranges_drop(const char *archive);
/* For the parts' callbacks: the first answer of range 0 honoured Range
 * (the other connections start); len more bytes arrived in p (nonzero:
 * range 0 failed, and this range stops too). */
void cctl__ranges_go(struct cctl__ranges *rs);
int cctl__ranges_count(struct cctl__part *p, size_t len);

/* mirror.c, for mirror sync: the redistrib_*.json names the mirror offers
 * (its index page's links, or a folder's files), sorted (free() each and
 * the array); and one manifest's text added to m when it parses and
 * agrees with m (1), else left out with a warning (0). */
int cctl__mirror_manifests(struct cctl_ctx *ctx, const struct cctl__source *s,
			   const struct cctl_fetch_opts *o, char ***names,
			   size_t *n);
int cctl__manifest_take(struct cctl_ctx *ctx, struct cctl_manifest *m,
			const char *name, const char *text, size_t len);

/* After a download that got no answer at all (the host did not resolve
 * or connect): the next steps, a proxy, another mirror, or --offline with
 * what the cache holds, as the hint (unless the OS layer gave one). */
void cctl__unreachable_hint(struct cctl_ctx *ctx);

#endif
