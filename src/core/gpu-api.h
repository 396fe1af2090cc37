/*
 * The cuDNN and CUDA driver entry points cudnnctl calls, declared by
 * cudnnctl itself: it builds without CUDA or cuDNN headers and loads both
 * libraries at run time.  tests/unit/check-gpu-api.c redeclares every
 * function below with the official types substituted (when cudnn.h and
 * cuda.h are found at build time), so any drift is a compile error.
 *
 * X(required, return type, name, parameter list): a table in the style of
 * libuv's winapi.c; "required" entries must resolve for the stage that
 * needs them to run.
 */
#ifndef CUDNNCTL_GPU_API_H
#define CUDNNCTL_GPU_API_H

#include <stddef.h>

#include "../platform/os.h" /* CCTL_GPU_CALL */

#ifndef CCTL_GPU_API_OFFICIAL_TYPES
typedef int cctl_cudnnStatus;
typedef struct cudnnContext *cctl_cudnnHandle;
typedef struct cudnnTensorStruct *cctl_cudnnTensorDesc;
typedef struct cudnnFilterStruct *cctl_cudnnFilterDesc;
typedef struct cudnnConvolutionStruct *cctl_cudnnConvDesc;
typedef int cctl_cudnnTensorFormat;
typedef int cctl_cudnnDataType;
typedef int cctl_cudnnConvMode;
typedef int cctl_cudnnConvFwdAlgo;
typedef int cctl_cudnnMathType;

typedef int cctl_CUresult;
typedef int cctl_CUdevice;
typedef int cctl_CUdeviceAttr;
typedef struct CUctx_st *cctl_CUcontext;
typedef unsigned long long cctl_CUdeviceptr;
typedef struct cctl_CUuuid_st {
	char bytes[16];
} cctl_CUuuid;
#endif

/* enum values used, checked against the official headers */
#define CCTL_CUDNN_STATUS_SUCCESS 0
#define CCTL_CUDNN_TENSOR_NCHW 0
#define CCTL_CUDNN_DATA_FLOAT 0
#define CCTL_CUDNN_CROSS_CORRELATION 1
#define CCTL_CUDNN_FMA_MATH 3
#define CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM 0
#define CCTL_CUDA_SUCCESS 0
#define CCTL_CUDA_ERROR_NO_DEVICE 100
#define CCTL_CU_ATTR_CC_MAJOR 75
#define CCTL_CU_ATTR_CC_MINOR 76

#define CCTL_CUDNN_FUNCS(X)                                                    \
	X(1, size_t, cudnnGetVersion, (void))                                  \
	X(1, size_t, cudnnGetCudartVersion, (void))                            \
	X(1, const char *, cudnnGetErrorString, (cctl_cudnnStatus))            \
	X(1, cctl_cudnnStatus, cudnnCreate, (cctl_cudnnHandle *))              \
	X(1, cctl_cudnnStatus, cudnnDestroy, (cctl_cudnnHandle))               \
	X(0, cctl_cudnnStatus, cudnnCreateTensorDescriptor,                    \
	  (cctl_cudnnTensorDesc *))                                            \
	X(0, cctl_cudnnStatus, cudnnSetTensor4dDescriptor,                     \
	  (cctl_cudnnTensorDesc, cctl_cudnnTensorFormat, cctl_cudnnDataType,   \
	   int, int, int, int))                                                \
	X(0, cctl_cudnnStatus, cudnnDestroyTensorDescriptor,                   \
	  (cctl_cudnnTensorDesc))                                              \
	X(0, cctl_cudnnStatus, cudnnCreateFilterDescriptor,                    \
	  (cctl_cudnnFilterDesc *))                                            \
	X(0, cctl_cudnnStatus, cudnnSetFilter4dDescriptor,                     \
	  (cctl_cudnnFilterDesc, cctl_cudnnDataType, cctl_cudnnTensorFormat,   \
	   int, int, int, int))                                                \
	X(0, cctl_cudnnStatus, cudnnDestroyFilterDescriptor,                   \
	  (cctl_cudnnFilterDesc))                                              \
	X(0, cctl_cudnnStatus, cudnnCreateConvolutionDescriptor,               \
	  (cctl_cudnnConvDesc *))                                              \
	X(0, cctl_cudnnStatus, cudnnSetConvolution2dDescriptor,                \
	  (cctl_cudnnConvDesc, int, int, int, int, int, int,                   \
	   cctl_cudnnConvMode, cctl_cudnnDataType))                            \
	X(0, cctl_cudnnStatus, cudnnSetConvolutionMathType,                    \
	  (cctl_cudnnConvDesc, cctl_cudnnMathType))                            \
	X(0, cctl_cudnnStatus, cudnnGetConvolution2dForwardOutputDim,          \
	  (cctl_cudnnConvDesc, cctl_cudnnTensorDesc, cctl_cudnnFilterDesc,     \
	   int *, int *, int *, int *))                                        \
	X(0, cctl_cudnnStatus, cudnnGetConvolutionForwardWorkspaceSize,        \
	  (cctl_cudnnHandle, cctl_cudnnTensorDesc, cctl_cudnnFilterDesc,       \
	   cctl_cudnnConvDesc, cctl_cudnnTensorDesc, cctl_cudnnConvFwdAlgo,    \
	   size_t *))                                                          \
	X(0, cctl_cudnnStatus, cudnnConvolutionForward,                        \
	  (cctl_cudnnHandle, const void *, cctl_cudnnTensorDesc, const void *, \
	   cctl_cudnnFilterDesc, const void *, cctl_cudnnConvDesc,             \
	   cctl_cudnnConvFwdAlgo, void *, size_t, const void *,                \
	   cctl_cudnnTensorDesc, void *))                                      \
	X(0, cctl_cudnnStatus, cudnnDestroyConvolutionDescriptor,              \
	  (cctl_cudnnConvDesc))

#define CCTL_CUDA_FUNCS(X)                                                     \
	X(1, cctl_CUresult, cuInit, (unsigned int))                            \
	X(1, cctl_CUresult, cuDriverGetVersion, (int *))                       \
	X(1, cctl_CUresult, cuDeviceGetCount, (int *))                         \
	X(1, cctl_CUresult, cuDeviceGet, (cctl_CUdevice *, int))               \
	X(1, cctl_CUresult, cuDeviceGetName, (char *, int, cctl_CUdevice))     \
	X(1, cctl_CUresult, cuDeviceGetAttribute,                              \
	  (int *, cctl_CUdeviceAttr, cctl_CUdevice))                           \
	X(1, cctl_CUresult, cuDeviceTotalMem_v2, (size_t *, cctl_CUdevice))    \
	X(0, cctl_CUresult, cuGetErrorString, (cctl_CUresult, const char **))  \
	X(0, cctl_CUresult, cuGetErrorName, (cctl_CUresult, const char **))    \
	X(0, cctl_CUresult, cuDeviceGetUuid_v2, (cctl_CUuuid *, cctl_CUdevice)) \
	X(0, cctl_CUresult, cuMemGetInfo_v2, (size_t *, size_t *))             \
	X(1, cctl_CUresult, cuDevicePrimaryCtxRetain,                          \
	  (cctl_CUcontext *, cctl_CUdevice))                                   \
	X(1, cctl_CUresult, cuDevicePrimaryCtxRelease_v2, (cctl_CUdevice))     \
	X(1, cctl_CUresult, cuCtxSetCurrent, (cctl_CUcontext))                 \
	X(1, cctl_CUresult, cuCtxSynchronize, (void))                          \
	X(1, cctl_CUresult, cuMemAlloc_v2, (cctl_CUdeviceptr *, size_t))       \
	X(1, cctl_CUresult, cuMemFree_v2, (cctl_CUdeviceptr))                  \
	X(1, cctl_CUresult, cuMemcpyHtoD_v2,                                   \
	  (cctl_CUdeviceptr, const void *, size_t))                            \
	X(1, cctl_CUresult, cuMemcpyDtoH_v2,                                   \
	  (void *, cctl_CUdeviceptr, size_t))

/* CCTL_GPU_CALL, the calling convention, comes from the OS layer (os.h) */

#define CCTL__GPU_FIELD(req, ret, name, params) ret(CCTL_GPU_CALL *name) params;

struct cctl_cudnn_api {
	CCTL_CUDNN_FUNCS(CCTL__GPU_FIELD)
};

struct cctl_cuda_api {
	CCTL_CUDA_FUNCS(CCTL__GPU_FIELD)
};

#endif
