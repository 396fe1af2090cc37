/*
 * A fake NVIDIA driver (libcuda.so.1) for verify's driver stage in the
 * tests: it reports the devices FAKE_CUDA_DEVICES lists,
 *   "NAME,MAJOR.MINOR,GIB;NAME,MAJOR.MINOR,GIB;..."
 * (default: one "Fake H200", 9.0, 141 GiB), and the driver version
 * FAKE_CUDA_DRIVER (default 13000).  Contexts and memory are refused with
 * CUDA_ERROR_NOT_SUPPORTED: it stands in for the driver's answers about
 * devices, never for a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))
#define NOT_SUPPORTED 801
#define INVALID_DEVICE 101
#define MAX_DEVICES 16

struct device {
	char name[128];
	int major, minor;
	unsigned long long gib;
};

static struct device devices[MAX_DEVICES];
static int ndevices = -1;

static void load(void)
{
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
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		snprintf(d->name, sizeof(d->name), "%s", tok);
		if (sscanf(c1 + 1, "%d.%d", &d->major, &d->minor) != 2)
			continue;
		d->gib = strtoull(c2 + 1, NULL, 10);
		ndevices++;
	}
}

FAKE_API int cuInit(unsigned flags)
{
	(void)flags;
	load();
	return ndevices ? 0 : 100; /* CUDA_ERROR_NO_DEVICE */
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
	load();
	if (i < 0 || i >= ndevices)
		return INVALID_DEVICE;
	*dev = i;
	return 0;
}

FAKE_API int cuDeviceGetName(char *name, int len, int dev)
{
	if (dev < 0 || dev >= ndevices || len <= 0)
		return INVALID_DEVICE;
	snprintf(name, (size_t)len, "%s", devices[dev].name);
	return 0;
}

FAKE_API int cuDeviceGetAttribute(int *v, int attr, int dev)
{
	if (dev < 0 || dev >= ndevices)
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
	if (dev < 0 || dev >= ndevices)
		return INVALID_DEVICE;
	*bytes = (size_t)(devices[dev].gib << 30);
	return 0;
}

FAKE_API int cuGetErrorString(int rc, const char **s)
{
	*s = rc == NOT_SUPPORTED ? "operation not supported (fake driver)"
	     : rc == 100	 ? "no CUDA-capable device is detected"
				 : "fake driver error";
	return 0;
}

#define REFUSE(name, params)                                                   \
	FAKE_API int name params                                               \
	{                                                                      \
		return NOT_SUPPORTED;                                          \
	}
REFUSE(cuDevicePrimaryCtxRetain, (void **c, int d))
REFUSE(cuDevicePrimaryCtxRelease_v2, (int d))
REFUSE(cuCtxSetCurrent, (void *c))
REFUSE(cuCtxSynchronize, (void))
REFUSE(cuMemAlloc_v2, (unsigned long long *p, size_t n))
REFUSE(cuMemFree_v2, (unsigned long long p))
REFUSE(cuMemcpyHtoD_v2, (unsigned long long d, const void *s, size_t n))
REFUSE(cuMemcpyDtoH_v2, (void *d, unsigned long long s, size_t n))
