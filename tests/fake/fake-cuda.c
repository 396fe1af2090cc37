/*
 * A fake NVIDIA driver (libcuda.so.1) for verify's GPU stages in the
 * tests.  It reports the devices FAKE_CUDA_DEVICES lists,
 *   "NAME,MAJOR.MINOR,GIB[,MODE];NAME,MAJOR.MINOR,GIB[,MODE];..."
 * (default: one "Fake H200", 9.0, 141 GiB), and the driver version
 * FAKE_CUDA_DRIVER (default 13000).  Its contexts work and its device
 * memory is host memory (what the fake cuDNN's "gpu" variant computes on),
 * except as MODE says:
 *   busy   the context is refused: CUDA_ERROR_DEVICE_UNAVAILABLE, as for a
 *          GPU another process holds in exclusive-process mode
 *   oom    100 MiB free (cuMemGetInfo)
 *   ecc    cuCtxSynchronize: CUDA_ERROR_ECC_UNCORRECTABLE
 *   lost   cuCtxSynchronize: CUDA_ERROR_LAUNCH_FAILED (a GPU that fell off
 *          the bus, Xid 79, shows as this)
 * FAKE_CUDA_RENDEZVOUS=N: cuCtxSynchronize waits, at most 10 s, until N
 * synchronisations have begun, and fails with CUDA_ERROR_TIMEOUT if they
 * do not: N GPUs checked one after another never pass.
 * It stands in for the driver's answers, never for a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_API __attribute__((visibility("default")))
#define OUT_OF_MEMORY 2
#define NO_DEVICE 100
#define INVALID_DEVICE 101
#define INVALID_CONTEXT 201
#define DEVICE_UNAVAILABLE 46
#define ECC_UNCORRECTABLE 214
#define LAUNCH_FAILED 719
#define NOT_SUPPORTED 801
#define TIMEOUT 909
#define MAX_DEVICES 16

enum mode { OK, BUSY, OOM, ECC, LOST };

struct device {
	char name[128];
	int major, minor;
	unsigned long long gib;
	enum mode mode;
	int ctx; /* the primary context's address is what cuCtx* get */
};

static struct device devices[MAX_DEVICES];
static int ndevices = -1;
static __thread int current = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int syncs_begun;

static void load(void)
{
	static const char *modes[] = { "ok", "busy", "oom", "ecc", "lost" };
	const char *env = getenv("FAKE_CUDA_DEVICES");
	char buf[2048], *save = NULL, *tok;
	if (ndevices >= 0)
		return;
	ndevices = 0;
	snprintf(buf, sizeof(buf), "%s", env ? env : "Fake H200,9.0,141");
	for (tok = strtok_r(buf, ";", &save); tok && ndevices < MAX_DEVICES;
	     tok = strtok_r(NULL, ";", &save)) {
		struct device *d = &devices[ndevices];
		char *c1 = strchr(tok, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		char *c3 = c2 ? strchr(c2 + 1, ',') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		if (c3)
			*c3 = '\0';
		snprintf(d->name, sizeof(d->name), "%s", tok);
		if (sscanf(c1 + 1, "%d.%d", &d->major, &d->minor) != 2)
			continue;
		d->gib = strtoull(c2 + 1, NULL, 10);
		d->mode = OK;
		for (int m = 0; c3 && m < 5; m++)
			if (!strcmp(c3 + 1, modes[m]))
				d->mode = (enum mode)m;
		ndevices++;
	}
}

static int valid(int dev)
{
	load();
	return dev >= 0 && dev < ndevices;
}

FAKE_API int cuInit(unsigned flags)
{
	(void)flags;
	load();
	return ndevices ? 0 : NO_DEVICE;
}

FAKE_API int cuDriverGetVersion(int *v)
{
	const char *env = getenv("FAKE_CUDA_DRIVER");
	*v = env ? atoi(env) : 13000;
	return 0;
}

FAKE_API int cuDeviceGetCount(int *n)
{
	load();
	*n = ndevices;
	return 0;
}

FAKE_API int cuDeviceGet(int *dev, int i)
{
	if (!valid(i))
		return INVALID_DEVICE;
	*dev = i;
	return 0;
}

FAKE_API int cuDeviceGetName(char *name, int len, int dev)
{
	if (!valid(dev) || len <= 0)
		return INVALID_DEVICE;
	snprintf(name, (size_t)len, "%s", devices[dev].name);
	return 0;
}

FAKE_API int cuDeviceGetAttribute(int *v, int attr, int dev)
{
	if (!valid(dev))
		return INVALID_DEVICE;
	if (attr == 75) /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
		*v = devices[dev].major;
	else if (attr == 76)
		*v = devices[dev].minor;
	else
		return NOT_SUPPORTED;
	return 0;
}

FAKE_API int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	if (!valid(dev))
		return INVALID_DEVICE;
	*bytes = (size_t)(devices[dev].gib << 30);
	return 0;
}

FAKE_API int cuDeviceGetUuid_v2(unsigned char *uuid, int dev)
{
	if (!valid(dev))
		return INVALID_DEVICE;
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0xf0 + (i == 15 ? dev : i % 10));
	return 0;
}

static const struct {
	int rc;
	const char *name, *text;
} errors[] = {
	{ OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE",
	  "CUDA-capable device(s) is/are busy or unavailable" },
	{ NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE",
	  "uncorrectable ECC error encountered" },
	{ LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
	{ NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported (fake driver)" },
	{ TIMEOUT, "CUDA_ERROR_TIMEOUT",
	  "timed out waiting for the other GPUs (fake driver: FAKE_CUDA_RENDEZVOUS)" },
};

FAKE_API int cuGetErrorString(int rc, const char **s)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].rc == rc) {
			*s = errors[i].text;
			return 0;
		}
	*s = "fake driver error";
	return 0;
}

FAKE_API int cuGetErrorName(int rc, const char **s)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].rc == rc) {
			*s = errors[i].name;
			return 0;
		}
	*s = NULL;
	return 1; /* CUDA_ERROR_INVALID_VALUE */
}

FAKE_API int cuDevicePrimaryCtxRetain(void **c, int dev)
{
	if (!valid(dev))
		return INVALID_DEVICE;
	if (devices[dev].mode == BUSY)
		return DEVICE_UNAVAILABLE;
	*c = &devices[dev].ctx;
	return 0;
}

FAKE_API int cuDevicePrimaryCtxRelease_v2(int dev)
{
	return valid(dev) ? 0 : INVALID_DEVICE;
}

FAKE_API int cuCtxSetCurrent(void *c)
{
	for (int i = 0; i < ndevices; i++)
		if (c == &devices[i].ctx) {
			current = i;
			return 0;
		}
	return INVALID_CONTEXT;
}

FAKE_API int cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	if (current < 0)
		return INVALID_CONTEXT;
	*total = (size_t)(devices[current].gib << 30);
	*free_b = devices[current].mode == OOM ? (size_t)100 << 20 : *total / 2;
	return 0;
}

FAKE_API int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
	void *m;
	if (current < 0)
		return INVALID_CONTEXT;
	if (devices[current].mode == OOM || !(m = malloc(n ? n : 1)))
		return OUT_OF_MEMORY;
	*p = (unsigned long long)(size_t)m;
	return 0;
}

FAKE_API int cuMemFree_v2(unsigned long long p)
{
	free((void *)(size_t)p);
	return 0;
}

FAKE_API int cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n)
{
	memcpy((void *)(size_t)d, s, n);
	return 0;
}

FAKE_API int cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n)
{
	memcpy(d, (const void *)(size_t)s, n);
	return 0;
}

FAKE_API int cuCtxSynchronize(void)
{
	const char *env = getenv("FAKE_CUDA_RENDEZVOUS");
	int want = env ? atoi(env) : 0, rc = 0;
	if (current < 0)
		return INVALID_CONTEXT;
	if (want > 0) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		pthread_mutex_lock(&lock);
		syncs_begun++;
		pthread_cond_broadcast(&cond);
		while (syncs_begun < want && !rc)
			rc = pthread_cond_timedwait(&cond, &lock, &until) ? TIMEOUT : 0;
		pthread_mutex_unlock(&lock);
		if (rc)
			return rc;
	}
	if (devices[current].mode == ECC)
		return ECC_UNCORRECTABLE;
	if (devices[current].mode == LOST)
		return LAUNCH_FAILED;
	return 0;
}
