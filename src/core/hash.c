/* SHA-256 through OpenSSL's EVP interface: the only file that uses
 * libcrypto. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "../platform/os.h"
#include "internal.h"

struct cctl_sha256 {
	EVP_MD_CTX *md;
};

struct cctl_sha256 *cctl_sha256_new(void)
{
	struct cctl_sha256 *h = cctl_xcalloc(1, sizeof(*h));
	h->md = EVP_MD_CTX_new();
	if (!h->md || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		abort(); /* only fails when out of memory */
	return h;
}

void cctl_sha256_update(struct cctl_sha256 *h, const void *data, size_t len)
{
	if (len)
		EVP_DigestUpdate(h->md, data, len);
}

void cctl_sha256_final(struct cctl_sha256 *h, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_DigestFinal_ex(h->md, md, &n);
	for (unsigned int i = 0; i < n && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	EVP_MD_CTX_free(h->md);
	free(h);
}

void cctl__sha256_peek(const struct cctl_sha256 *h, char hex[65])
{
	struct cctl_sha256 *c = cctl_xcalloc(1, sizeof(*c));
	if (!(c->md = EVP_MD_CTX_new()) || EVP_MD_CTX_copy_ex(c->md, h->md) != 1)
		abort(); /* only fails when out of memory */
	cctl_sha256_final(c, hex);
}

int cctl_sha256_fd(struct cctl_ctx *ctx, int fd, const char *name,
		   char hex[65], uint64_t *size)
{
	enum { CHUNK = 1 << 20 };
	struct cctl_sha256 *h = cctl_sha256_new();
	unsigned char *buf = cctl_xmalloc(CHUNK);
	struct cctl_os_stat st;
	uint64_t total = 0, done = 0;
	size_t got;
	int ret;

	if (cctl_os_stat(NULL, name, &st) == 0)
		total = st.size;
	ret = cctl_os_seek(ctx, fd, name, 0, SEEK_SET, NULL);
	while (!ret && !(ret = cctl__interrupt(ctx)) &&
	       !(ret = cctl_os_read(ctx, fd, name, buf, CHUNK, &got)) && got) {
		cctl_sha256_update(h, buf, got);
		done += (uint64_t)got;
		cctl__progress(ctx, CCTL_PHASE_HASH, done, total);
	}
	cctl_sha256_final(h, hex);
	free(buf);
	if (size)
		*size = done;
	return ret;
}

int cctl_sha256_file(struct cctl_ctx *ctx, const char *path, char hex[65],
		     uint64_t *size)
{
	int fd, ret = cctl_os_open_read(ctx, path, &fd);
	if (ret)
		return ret;
	ret = cctl_sha256_fd(ctx, fd, path, hex, size);
	cctl_os_close(fd);
	return ret;
}
