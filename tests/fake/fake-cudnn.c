/*
 * A fake cuDNN library for the failure paths of `cudnnctl verify`.  It
 * exports the entry points verify resolves and returns the values it was
 * built with (FAKE_VERSION, FAKE_CUDART).  Built as the main library and as
 * each sub-library; it never stands in for a claim about real cuDNN.
 */
#include <stddef.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 91900
#endif
#ifndef FAKE_CUDART
#define FAKE_CUDART 13010
#endif

#if defined(_WIN32)
#define FAKE_API __declspec(dllexport)
#else
#define FAKE_API __attribute__((visibility("default")))
#endif

#ifdef FAKE_NEEDS_ABSENT
/* links against a library the tests then leave out */
extern int cctl_absent_symbol(void);
FAKE_API int fake_uses_absent(void)
{
	return cctl_absent_symbol();
}
#endif

FAKE_API size_t cudnnGetVersion(void)
{
	return FAKE_VERSION;
}

FAKE_API size_t cudnnGetCudartVersion(void)
{
	return FAKE_CUDART;
}

FAKE_API const char *cudnnGetErrorString(int status)
{
	return status ? "CUDNN_STATUS_NOT_INITIALIZED (fake)" : "CUDNN_STATUS_SUCCESS";
}

FAKE_API int cudnnCreate(void **handle)
{
	*handle = NULL;
	return 1001; /* CUDNN_STATUS_NOT_INITIALIZED */
}

FAKE_API int cudnnDestroy(void *handle)
{
	(void)handle;
	return 0;
}
