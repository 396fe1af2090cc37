/* The bytes of an archive being downloaded, for a reader that goes along
 * (feed.c): what fetch.c and fetch-ranges.c tell as the bytes land in the
 * cache's files, and what the scan reads, waiting where they have not
 * come yet.  Not part of the API. */
#ifndef CUDNNCTL_FEED_H
#define CUDNNCTL_FEED_H

#include <stddef.h>
#include <stdint.h>

struct cctl_ctx;
struct cctl__feed;

/* The most spans a feed holds: NAME.part and the ranges after it
 * (fetch-ranges.c cuts an archive into at most CCTL__FEED_SPANS - 1). */
#define CCTL__FEED_SPANS 65

/* A feed of an archive of size bytes; NULL when threads are refused. */
struct cctl__feed *cctl__feed_new(uint64_t size);
void cctl__feed_free(struct cctl__feed *f);

/* The fetch's side; each is a no-op for a NULL feed.  A span is the
 * bytes from start to the next span's start (or the end), held in path
 * from its byte 0 on; have of them are written.  Every file the feed
 * read is closed before the fetch truncates, deletes or renames it. */
/* No spans (each file closed): the reader waits until some are told. */
void cctl__feed_clear(struct cctl__feed *f);
void cctl__feed_span(struct cctl__feed *f, uint64_t start, const char *path,
		     uint64_t have);
void cctl__feed_have(struct cctl__feed *f, uint64_t start, uint64_t have);
/* path is about to be truncated or deleted: its spans hold nothing. */
void cctl__feed_forget(struct cctl__feed *f, const char *path);
/* path is about to be written again from its byte 0, with bytes that may
 * not be the ones there now. */
void cctl__feed_restart(struct cctl__feed *f, const char *path);
/* Only the archive's first have bytes remain, in path; the others come
 * again (a download gone back to one connection). */
void cctl__feed_keep(struct cctl__feed *f, const char *path, uint64_t have);
/* Whether either of those took back bytes the reader had been given: its
 * reads then fail, and what it made of them must not be used (the whole
 * file, once verified, is read again). */
int cctl__feed_restarted(struct cctl__feed *f);
/* The span at start now lies in path at the archive's own offsets (the
 * ranges appended to NAME.part), written whole. */
void cctl__feed_moved(struct cctl__feed *f, uint64_t start, const char *path);
/* Renames from to to with the feed's files of from closed, and tells
 * the spans. */
int cctl__feed_rename(struct cctl_ctx *ctx, struct cctl__feed *f,
		      const char *from, const char *to);
/* The download ended: 0, or the failure's code, which the reader then
 * gets too (each file closed). */
void cctl__feed_end(struct cctl__feed *f, int ret);

/* The reader's side: up to len bytes at pos, waiting until they are on
 * the disk; *got 0 at the end.  A download that failed is CCTL_ENETWORK
 * (or its own code), with a message in ctx. */
int cctl__feed_read(struct cctl_ctx *ctx, struct cctl__feed *f, uint64_t pos,
		    void *buf, size_t len, size_t *got);
uint64_t cctl__feed_size(const struct cctl__feed *f);
/* The reader needs the last bytes first (a zip's central directory): a
 * download over several connections fetches them as a range of their
 * own.  0 (also for a NULL feed): no such need. */
void cctl__feed_want_tail(struct cctl__feed *f, uint64_t bytes);
uint64_t cctl__feed_tail(const struct cctl__feed *f);
/* Waits until the last `need` bytes are all on the disk (1), or bytes 0 to
 * `prefix` are, or the download ended or started again (0): whether the
 * end came first (a tar.xz's index, for decoding its blocks on threads). */
int cctl__feed_wait_end(struct cctl__feed *f, uint64_t need, uint64_t prefix);
/* The reader hashes the whole archive in order as it reads it (set
 * before the download starts), so that the fetch does not hash it too:
 * the fetch then takes the reader's digest (cctl__feed_wait_digest). */
void cctl__feed_reader_hashes(struct cctl__feed *f);
int cctl__feed_hashed_by_reader(const struct cctl__feed *f);
/* The reader's SHA-256 of bytes 0 to the end, as it read them; NULL: none
 * comes (it stopped, or never started).  The first call counts. */
void cctl__feed_digest(struct cctl__feed *f, const char *hex);
/* The fetch's side, once every byte is written: waits until the reader
 * told its digest or that none comes; 1 with hex set when it has one of
 * bytes nobody took back, else 0 (the fetch hashes the file itself). */
int cctl__feed_wait_digest(struct cctl__feed *f, char hex[65]);
/* The NAME.part the download lands in and resumes from, set before it
 * starts (NULL: none told): the members a reader unpacks from its bytes
 * may be kept for the next try (archive-resume.c). */
void cctl__feed_set_part(struct cctl__feed *f, const char *path);
const char *cctl__feed_part(const struct cctl__feed *f);

#endif
